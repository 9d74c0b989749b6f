import { readFileSync } from 'node:fs';

/** An address from /proc/net/tcp{,6} (hex, in the kernel's byte order) as text: 127.0.0.1, ::, ::ffff:127.0.0.1. */
function decode(hex: string): string {
  const words = (hex.match(/.{8}/g) ?? []).map((word) => Buffer.from(word, 'hex').reverse());
  const bytes = Buffer.concat(words);
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.subarray(0, 12).equals(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]))) return `::ffff:${[...bytes.subarray(12)].join('.')}`;
  const groups = (bytes.toString('hex').match(/.{4}/g) ?? []).map((group) => group.replace(/^0+(?=.)/, ''));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** Every local address with a socket in LISTEN state on `port`, read from /proc/net/tcp and tcp6. */
export function listeningAddresses(port: number): string[] {
  const addresses: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue;
      const [address = '', portHex = ''] = local.split(':');
      if (parseInt(portHex, 16) === port) addresses.push(decode(address));
    }
  }
  return addresses;
}

/** Whether an address is the loopback interface only. */
export const isLoopback = (address: string): boolean => address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
