// The kubelet's part for a Deployment of one or more operator replicas: a killed replica is started
// again at once (restartPolicy: Always), and the suite's own calls wait while no webhook serves.
import type { Replica, ReliabilityCluster, ReplicaOptions } from './cluster.ts';

export interface Supervisor {
  /** The replica now running (the newest start). */
  current(): Replica;
  /** Replicas started after a kill. */
  readonly restarts: number;
  /** Kill the running replica with SIGKILL; the supervisor starts another. */
  kill(): Promise<void>;
  /** Stop restarting (the cluster stops the last replica). */
  stop(): void;
}

export async function supervise(cluster: ReliabilityCluster, options: ReplicaOptions = {}): Promise<Supervisor> {
  let stopped = false;
  let restarts = 0;
  let replica = await cluster.startReplica(options);
  const watch = (r: Replica): void => {
    void r.process.child.exited.then(async () => {
      if (stopped) return;
      restarts++;
      replica = await cluster.startReplica(options);
      watch(replica);
    });
  };
  watch(replica);
  return {
    current: () => replica,
    get restarts() {
      return restarts;
    },
    kill: async () => {
      const victim = replica;
      if (!victim.exited) await victim.kill();
    },
    stop: () => {
      stopped = true;
    },
  };
}

const WEBHOOK_DOWN = /failed calling webhook|ECONNREFUSED|connection refused|socket hang up|ECONNRESET/;

/**
 * Runs one of the suite's API calls, again while it fails only because no operator serves the
 * admission webhook (the chart's webhooks fail closed, as a user's kubectl would see between a
 * Pod's death and its replacement).
 */
export async function whileWebhookDown<T>(call: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!WEBHOOK_DOWN.test(String(error)) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
