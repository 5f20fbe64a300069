// Prisma CLI configuration (studio, migrate status) over the same database the server uses.
// Offline, Prisma 6.19 runs with the JavaScript engine through a driver adapter (see shared toolchain notes).
import fs from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: path.join('prisma', 'schema.prisma'),
  experimental: { adapter: true, studio: true },
  engine: 'js',
  async adapter() {
    const url = process.env.DATABASE_URL;
    if (url) {
      const { PrismaPg } = await import('@prisma/adapter-pg');
      return new PrismaPg({ connectionString: url });
    }
    const { PGlite } = await import('@electric-sql/pglite');
    const { PrismaPGlite } = await import('pglite-prisma-adapter');
    // Opened on first connect, not here: an opened (existing) PGlite directory keeps Node alive, and commands
    // that never connect (`prisma -v`, run by @prisma/client's install script) would then hang for ever.
    let factory: InstanceType<typeof PrismaPGlite> | undefined;
    const open = (): InstanceType<typeof PrismaPGlite> => {
      if (!factory) {
        const dir = path.resolve(process.env.DATA_DIR ?? './data', 'pglite');
        fs.mkdirSync(dir, { recursive: true });
        factory = new PrismaPGlite(new PGlite(dir));
      }
      return factory;
    };
    return {
      provider: 'postgres' as const,
      adapterName: 'pglite-prisma-adapter',
      connect: () => open().connect(),
      connectToShadowDb: () => open().connectToShadowDb(),
    };
  },
});
