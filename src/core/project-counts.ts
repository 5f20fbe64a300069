// Places held per project and in all, each given back once: the bookkeeping of the budgets that admit work before
// it starts (large requests, bot input).

/** Counts places held, per project and in all. */
export class ProjectCounts {
  private readonly byProject = new Map<string, number>();
  private all = 0;

  /** Places `project` holds. */
  of(project: string): number {
    return this.byProject.get(project) ?? 0;
  }

  /** Places held by every project together. */
  get total(): number {
    return this.all;
  }

  /** Takes a place for `project`; returns its release (idempotent). */
  take(project: string): () => void {
    this.byProject.set(project, this.of(project) + 1);
    this.all++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.all--;
      const left = this.of(project) - 1;
      if (left > 0) this.byProject.set(project, left);
      else this.byProject.delete(project);
    };
  }
}
