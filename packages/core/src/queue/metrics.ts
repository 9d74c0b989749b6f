/** What the queue knows about its in-flight work, read by metrics at scrape time. */
export interface InFlightWork {
  /** Seconds of work in progress that has not finished yet, summed over items. */
  unfinishedWorkSeconds(): number;
  /** Seconds the longest-running item in progress has been running. */
  longestRunningProcessorSeconds(): number;
}

/**
 * Hooks a {@link WorkQueue} calls, bound to one queue name (client-go's
 * workqueue MetricsProvider). `CoreMetrics.workQueueMetrics(name)` makes one
 * backed by prom-client.
 */
export interface WorkQueueMetricsProvider {
  setDepth(depth: number): void;
  incAdds(): void;
  incRetries(): void;
  /** Seconds an item waited in the queue before a worker got it. */
  observeQueueDuration(seconds: number): void;
  /** Seconds from `get` to `done` for one item. */
  observeWorkDuration(seconds: number): void;
  /** Called once at construction so gauges about in-flight work can be computed when scraped. */
  trackInFlight(work: InFlightWork): void;
}
