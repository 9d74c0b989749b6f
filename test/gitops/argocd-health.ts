// Runs k8or's Argo CD health check (charts/k8or/health/k8or.lua) in a real Lua VM: wasmoon, the C
// Lua interpreter compiled to WebAssembly. The object goes in as a Lua table, as Argo CD hands it
// to its scripts, and the script must stay within Lua 5.1, the language of Argo CD's gopher-lua.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LuaFactory } from 'wasmoon';

export const HEALTH_DIR = fileURLToPath(new URL('../../charts/k8or/health/', import.meta.url));

/** The script Argo CD runs for each kind (argocd-cm key suffix `k8or.io_KIND`): one for all three. */
export const SCRIPT_FOR_KIND = { Bucket: 'k8or.lua', Table: 'k8or.lua', ProviderConfig: 'k8or.lua' } as const;

export function healthScript(kind: keyof typeof SCRIPT_FOR_KIND): string {
  return readFileSync(`${HEALTH_DIR}${SCRIPT_FOR_KIND[kind]}`, 'utf8');
}

export interface Health {
  status: string;
  message: string;
}

const factory = new LuaFactory();

/** The health a script returns for `object` (its JSON as the API server returns it). */
export async function runHealthCheck(script: string, object: unknown): Promise<Health> {
  const lua = await factory.createEngine();
  try {
    await lua.doString(`obj = ${luaLiteral(object)}`);
    // Argo CD runs the script as a function body: its top-level `return hs` is the result.
    const result: unknown = await lua.doString(`local hs = (function() ${script}\nend)()\nreturn hs.status .. "\\n" .. (hs.message or "")`);
    if (typeof result !== 'string') throw new Error(`the health check returned ${typeof result}, not a table with status`);
    const [status = '', ...message] = result.split('\n');
    return { status, message: message.join('\n') };
  } finally {
    lua.global.close();
  }
}

/** JSON as a Lua table constructor: objects keyed by string, arrays from index 1, null as nil. */
export function luaLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return luaString(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a JSON number: ${value}`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `{${value.map((v) => luaLiteral(v)).join(', ')}}`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `[${luaString(k)}] = ${luaLiteral(v)}`)
      .join(', ')}}`;
  }
  throw new Error(`not JSON: ${typeof value}`);
}

/** A Lua string literal: quotes, backslashes and control characters escaped as decimal bytes. */
function luaString(text: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${text.replace(/["\\\u0000-\u001f\u007f]/g, (ch) => `\\${ch.charCodeAt(0).toString().padStart(3, '0')}`)}"`;
}

/**
 * What Lua 5.4 (wasmoon) accepts and Lua 5.1 (gopher-lua) does not, found in a script's code
 * (comments and strings left out): goto and labels, integer division, bitwise operators, the
 * utf8 library, integer/float-only functions of 5.3+, and `<const>`/`<close>` attributes.
 */
export function lua51Problems(source: string): string[] {
  const code = stripCommentsAndStrings(source);
  const rules: Array<[RegExp, string]> = [
    [/\bgoto\b/, 'goto (Lua 5.2+)'],
    [/::[A-Za-z_]\w*::/, 'a label (Lua 5.2+)'],
    [/\/\//, 'integer division // (Lua 5.3+)'],
    [/&|\||~(?!=)|<<|>>/, 'a bitwise operator (Lua 5.3+)'],
    [/\butf8\s*\./, 'the utf8 library (Lua 5.3+)'],
    [/\bmath\.(tointeger|type|ult|maxinteger|mininteger)\b/, 'an integer function of math (Lua 5.3+)'],
    [/\btable\.(move|pack|unpack)\b/, 'table.move/pack/unpack (Lua 5.2+)'],
    [/<\s*(const|close)\s*>/, 'a variable attribute (Lua 5.4)'],
    [/\bstring\.(pack|unpack|packsize)\b/, 'string.pack (Lua 5.3+)'],
  ];
  const problems: string[] = [];
  code.split('\n').forEach((line, index) => {
    for (const [pattern, what] of rules) if (pattern.test(line)) problems.push(`line ${index + 1}: ${what}`);
  });
  return problems;
}

/** The code with comments and string literals blanked (line breaks kept, so line numbers hold). */
function stripCommentsAndStrings(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const rest = source.slice(i);
    const long = /^(--)?\[(=*)\[/.exec(rest);
    if (long && (long[1] || !/[\w)\]]$/.test(out.trimEnd()))) {
      const close = `]${long[2]}]`;
      const end = source.indexOf(close, i + long[0].length);
      const stop = end < 0 ? source.length : end + close.length;
      out += source.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (rest.startsWith('--')) {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      i = stop;
    } else if (rest[0] === '"' || rest[0] === "'") {
      const quote = rest[0];
      let j = i + 1;
      while (j < source.length && source[j] !== quote && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      out += '""';
      i = j + 1;
    } else {
      out += source[i];
      i += 1;
    }
  }
  return out;
}
