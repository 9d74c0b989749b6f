/** Compiled CRD schemas (src/schema), one per CRD version and generation. */
import { compileCrdSchema, SchemaCompileError, type CompiledSchema } from '../schema/index.js';

export type { CompiledSchema } from '../schema/index.js';
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const PASS_THROUGH: CompiledSchema = {
  admit: (object) => ({ object, errors: [], warnings: [] }),
  applyDefaults: (object) => object,
};

/** Why a CRD version's schema cannot be compiled (bad pattern, bad CEL rule), if it cannot. */
export function schemaProblems(openAPIV3Schema: unknown): string[] {
  try {
    compileCrdSchema(openAPIV3Schema);
    return [];
  } catch (err) {
    return err instanceof SchemaCompileError ? err.errors : [(err as Error).message];
  }
}

export class SchemaCache {
  /** key: CRD uid + generation + version name, so an edited CRD recompiles. */
  private readonly compiled = new Map<string, CompiledSchema>();

  get(cacheKey: string, openAPIV3Schema: unknown): CompiledSchema {
    if (openAPIV3Schema === undefined) return PASS_THROUGH;
    let schema = this.compiled.get(cacheKey);
    if (!schema) {
      try {
        schema = compileCrdSchema(openAPIV3Schema);
      } catch {
        schema = PASS_THROUGH;
      }
      if (this.compiled.size > 500) this.compiled.clear();
      this.compiled.set(cacheKey, schema);
    }
    return schema;
  }

  forget(): void {
    this.compiled.clear();
  }
}
