import type { ManagedResource } from '@k8or/api';
import type { CallOptions, Connector, InventoryContext, InventoryItem } from './contract.js';

/**
 * A connector whose module, and with it the cloud's SDK, is imported on its
 * first `connect` or `list`: a process with no Table never loads DynamoDB's
 * client, and one with no ProviderConfig of a cloud never loads that cloud's
 * SDKs (tens of MiB of RSS each). `load` is called once; a failed import is
 * tried again on the next call. The connector it resolves to must have `list`
 * when `options.list` says so.
 */
export function lazyConnector<R extends ManagedResource>(load: () => Promise<Connector<R>>, options: { list?: boolean } = {}): Connector<R> {
  let loading: Promise<Connector<R>> | undefined;
  const loaded = (): Promise<Connector<R>> =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
  const connector: Connector<R> = { connect: async (resource, context) => await (await loaded()).connect(resource, context) };
  if (options.list) {
    connector.list = async (context: InventoryContext, call: CallOptions): Promise<InventoryItem<R>[]> => {
      const inner = await loaded();
      if (!inner.list) throw new TypeError('lazyConnector: the loaded connector has no list, but { list: true } was declared');
      return await inner.list(context, call);
    };
  }
  return connector;
}
