// Typed expansion errors: each carries the HTTP status and the FHIR issue code of its OperationOutcome.

export type TerminologyIssueCode =
  | 'invalid'
  | 'not-found'
  | 'processing'
  | 'too-costly'
  | 'not-supported'
  | 'code-invalid'
  | 'exception'
  | 'business-rule';

export class TerminologyError extends Error {
  readonly status: number;
  readonly issueCode: TerminologyIssueCode;
  /** FHIRPath-ish locations of the problem (e.g. `ValueSet.compose.include[0].filter[1]`). */
  readonly expression?: string[];
  /** The HL7 terminology ecosystem's issue type (`http://hl7.org/fhir/tools/CodeSystem/tx-issue-type`), e.g.
   * `not-found`, `version-error`: sent as `details.coding`. */
  txIssueType?: string;

  constructor(status: number, issueCode: TerminologyIssueCode, message: string, expression?: string[]) {
    super(message);
    this.name = 'TerminologyError';
    this.status = status;
    this.issueCode = issueCode;
    this.expression = expression;
  }

  toOperationOutcome(): {
    resourceType: 'OperationOutcome';
    issue: Array<{ severity: 'error'; code: string; diagnostics: string; expression?: string[] }>;
  } {
    return {
      resourceType: 'OperationOutcome',
      issue: [
        {
          severity: 'error',
          code: this.issueCode,
          diagnostics: this.message,
          ...(this.expression ? { expression: this.expression } : {}),
        },
      ],
    };
  }
}

export const invalid = (message: string, expression?: string[]): TerminologyError =>
  new TerminologyError(400, 'invalid', message, expression);

/** The error with the HL7 terminology ecosystem's issue type set (sent as `details.coding`). */
export function withTxIssueType(type: string, err: TerminologyError): TerminologyError {
  err.txIssueType = type;
  return err;
}
