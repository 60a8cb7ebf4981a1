package io.tierkv.observe;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.tiers.MovePath;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.disk.DiskStats;
import io.tierkv.tiers.events.KvEventStats;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * A Micrometer binder for a {@code KvBlockManager}: {@code tierkv_*} counters, gauges and time
 * gauges per tier and direction, read from one {@code stats()} snapshot that {@link #refresh()}
 * takes (the scrape endpoint refreshes before each scrape, so one scrape is one consistent
 * snapshot and costs one {@code stats()} call). Names follow LMCache's ({@code hit}, {@code usage})
 * and Dynamo KVBM's ({@code offload}/{@code onboard} blocks per direction) split; in Prometheus
 * form (counters end in {@code _total}):
 *
 * <pre>
 * tierkv_lookup_blocks_total{result=hit|miss, tier=gpu|below|none}   prefix-match lookups, in blocks
 * tierkv_read_blocks_total{tier=gpu|cpu|disk}                       whole-block reads served per tier
 * tierkv_disk_adoptions_total                                        prefix hits served from disk records
 * tierkv_move_blocks_total{direction=d2h|h2d|h2disk|disk2d|disk2h}   blocks moved per direction
 * tierkv_move_bytes_total{direction=...}                             bytes moved per direction
 * tierkv_move_latency_seconds{direction=..., quantile=0.5|0.99}      move latency percentiles
 * tierkv_evictions_total{tier=gpu|cpu|disk, cause=...}               gpu: evict, clean_drop;
 *                                                                    cpu: evict, clean_drop;
 *                                                                    disk: evict, remove, quarantine
 * tierkv_usage_blocks{tier=gpu|cpu|disk}                             blocks held now
 * tierkv_capacity_blocks{tier=gpu|cpu}                               slots
 * tierkv_disk_used_bytes, tierkv_disk_budget_bytes                   disk bytes now and budget
 * tierkv_failures_total{kind=...}                                    disk_miss, disk_spill, host_allocation,
 *                                                                    promotion, demotion, admission, lost,
 *                                                                    hash_collision, mover_error
 * tierkv_queue_depth{path=...}, tierkv_queue_rejected_total{path=...} the mover's bounded queues
 * tierkv_pressure_mode                                               0 RELAXED .. 4 EMERGENCY
 * tierkv_kv_events_total{outcome=queued|dropped|delivered}           KV event queue (with a listener)
 * tierkv_kv_event_batches_total
 * </pre>
 *
 * <p>Thread-safe: the snapshot is a volatile reference; meters read whatever snapshot is current.
 */
public final class TierKvMetrics implements MeterBinder {

    private final Supplier<TierStats> stats;
    private final Supplier<Optional<KvEventStats>> eventStats;
    private volatile TierStats snapshot;
    private volatile KvEventStats events;

    /**
     * Creates a binder.
     *
     * @param stats      the manager's {@code stats()}
     * @param eventStats the manager's {@code kvEventStats()}
     * @throws NullPointerException if an argument is null
     */
    public TierKvMetrics(Supplier<TierStats> stats, Supplier<Optional<KvEventStats>> eventStats) {
        this.stats = Objects.requireNonNull(stats, "stats");
        this.eventStats = Objects.requireNonNull(eventStats, "eventStats");
        refresh();
    }

    /**
     * Takes a fresh snapshot for the meters to read.
     *
     * @return the snapshot taken
     */
    public TierStats refresh() {
        TierStats s = stats.get();
        events = eventStats.get().orElse(null);
        snapshot = s;
        return s;
    }

    @Override
    public void bindTo(MeterRegistry r) {
        counter(r, "tierkv.lookup.blocks", "prefix-match lookups in blocks", s -> s.cache().prefixHitBlocks()
                - s.cache().prefixHitBlocksBelow(), "result", "hit", "tier", "gpu");
        counter(r, "tierkv.lookup.blocks", "prefix-match lookups in blocks", s -> s.cache().prefixHitBlocksBelow(),
                "result", "hit", "tier", "below");
        counter(r, "tierkv.lookup.blocks", "prefix-match lookups in blocks", s -> s.cache().prefixMissBlocks(),
                "result", "miss", "tier", "none");
        counter(r, "tierkv.read.blocks", "whole-block reads per tier", s -> s.cache().deviceReads(), "tier", "gpu");
        counter(r, "tierkv.read.blocks", "whole-block reads per tier", s -> s.hostReads().blocks(), "tier", "cpu");
        counter(r, "tierkv.read.blocks", "whole-block reads per tier", s -> s.diskReads().blocks(), "tier", "disk");
        counter(r, "tierkv.disk.adoptions", "prefix hits served from disk records", TierStats::diskAdoptions);
        move(r, "d2h", TierStats::demotions);
        move(r, "h2d", TierStats::promotions);
        move(r, "h2disk", TierStats::diskSpills);
        move(r, "disk2d", TierStats::diskLoads);
        move(r, "disk2h", TierStats::diskToHost);
        eviction(r, "gpu", "evict", s -> s.cache().evictions());
        eviction(r, "gpu", "clean_drop", s -> s.cache().cleanDrops());
        eviction(r, "cpu", "evict", TierStats::hostEvictions);
        eviction(r, "cpu", "clean_drop", TierStats::hostCleanDrops);
        eviction(r, "disk", "evict", s -> disk(s, DiskStats::evictions));
        eviction(r, "disk", "remove", s -> disk(s, DiskStats::removals));
        eviction(r, "disk", "quarantine", s -> disk(s, DiskStats::quarantined));
        gauge(r, "tierkv.usage.blocks", "blocks held now", s -> s.cache().deviceUsedBlocks(), "tier", "gpu");
        gauge(r, "tierkv.usage.blocks", "blocks held now", TierStats::hostUsedBlocks, "tier", "cpu");
        gauge(r, "tierkv.usage.blocks", "blocks held now", s -> disk(s, DiskStats::blockCount), "tier", "disk");
        gauge(r, "tierkv.capacity.blocks", "slots", s -> s.cache().deviceCapacityBlocks(), "tier", "gpu");
        gauge(r, "tierkv.capacity.blocks", "slots", TierStats::hostCapacityBlocks, "tier", "cpu");
        gauge(r, "tierkv.disk.used.bytes", "bytes of the disk tier's files", s -> disk(s, DiskStats::usedBytes));
        gauge(r, "tierkv.disk.budget.bytes", "the disk tier's budget", s -> disk(s, DiskStats::budgetBytes));
        failure(r, "disk_miss", TierStats::diskMisses);
        failure(r, "disk_spill", TierStats::diskSpillFailures);
        failure(r, "host_allocation", TierStats::hostAllocationFailures);
        failure(r, "promotion", s -> s.cache().failedPromotions());
        failure(r, "demotion", s -> s.cache().failedDemotions());
        failure(r, "admission", s -> s.cache().admissionFailures());
        failure(r, "lost", s -> s.cache().lostBlocks());
        failure(r, "hash_collision", s -> s.cache().hashCollisions());
        failure(r, "mover_error", TierStats::moverErrors);
        for (MovePath p : MovePath.values()) {
            String path = p.name().toLowerCase(java.util.Locale.ROOT);
            gauge(r, "tierkv.queue.depth", "entries waiting in the mover's queue", s -> queue(s, p).depth(),
                    "path", path);
            counter(r, "tierkv.queue.rejected", "offers refused by a full mover queue", s -> queue(s, p).rejected(),
                    "path", path);
        }
        gauge(r, "tierkv.pressure.mode", "pressure mode ordinal: 0 RELAXED .. 4 EMERGENCY",
                s -> s.pressureMode().ordinal());
        remote(r);
        eventCounter(r, "tierkv.kv.events", KvEventStats::queued, "outcome", "queued");
        eventCounter(r, "tierkv.kv.events", KvEventStats::dropped, "outcome", "dropped");
        eventCounter(r, "tierkv.kv.events", KvEventStats::delivered, "outcome", "delivered");
        eventCounter(r, "tierkv.kv.event.batches", KvEventStats::batches);
    }

    /** The remote tier's series, zero for a manager without one (so a scrape's names do not depend on it). */
    private void remote(MeterRegistry r) {
        counter(r, "tierkv.remote.lookup.blocks", "chain keys the store was asked for and found",
                s -> remote(s, t -> t.store().lookupHits()), "result", "hit");
        counter(r, "tierkv.remote.blocks", "blocks per step of the remote tier", s -> remote(s, t -> t.fetched()),
                "step", "fetched");
        counter(r, "tierkv.remote.blocks", "blocks per step of the remote tier", s -> remote(s, t -> t.adopted()),
                "step", "adopted");
        counter(r, "tierkv.remote.blocks", "blocks per step of the remote tier", s -> remote(s, t -> t.pushOffered()),
                "step", "offered");
        counter(r, "tierkv.remote.blocks", "blocks per step of the remote tier", s -> remote(s, t -> t.store().puts()),
                "step", "sent");
        counter(r, "tierkv.remote.dropped.blocks", "blocks offered to the store and not written",
                s -> remote(s, t -> t.pushDropped()), "cause", "outbox_full");
        counter(r, "tierkv.remote.dropped.blocks", "blocks offered to the store and not written",
                s -> remote(s, t -> t.store().putsDropped()), "cause", "store");
        gauge(r, "tierkv.remote.pending.blocks", "blocks in the outbox, not yet answered",
                s -> remote(s, t -> t.pushPending()));
        counter(r, "tierkv.remote.failures", "store calls and values that failed", s -> remote(s, t -> t.store().timeouts()),
                "kind", "timeout");
        counter(r, "tierkv.remote.failures", "store calls and values that failed", s -> remote(s, t -> t.store().errors()),
                "kind", "error");
        counter(r, "tierkv.remote.failures", "store calls and values that failed", s -> remote(s, t -> t.store().damaged()),
                "kind", "damaged");
        counter(r, "tierkv.remote.failures", "store calls and values that failed",
                s -> remote(s, t -> t.store().collisions()), "kind", "collision");
        gauge(r, "tierkv.remote.breaker.open", "1 while the store's circuit breaker refuses calls, else 0",
                s -> remote(s, t -> "CLOSED".equals(t.store().breakerState())
                        || "NONE".equals(t.store().breakerState()) ? 0 : 1));
    }

    private static double remote(TierStats s, ToDoubleFunction<TierStats.RemoteTierStats> f) {
        return s.remote() == null ? 0 : f.applyAsDouble(s.remote());
    }

    private static TierStats.QueueStats queue(TierStats s, MovePath p) {
        TierStats.QueueStats q = s.queues().get(p);
        return q == null ? new TierStats.QueueStats(0, 0, 0, 0, 0, 0, 0) : q;
    }

    private static double disk(TierStats s, ToDoubleFunction<DiskStats> f) {
        return s.disk() == null ? 0 : f.applyAsDouble(s.disk());
    }

    private void move(MeterRegistry r, String direction, java.util.function.Function<TierStats, TierStats.MoveStats> f) {
        counter(r, "tierkv.move.blocks", "blocks moved per direction", s -> f.apply(s).blocks(), "direction", direction);
        counter(r, "tierkv.move.bytes", "bytes moved per direction", s -> f.apply(s).bytes(), "direction", direction);
        TimeGauge.builder("tierkv.move.latency", this, TimeUnit.NANOSECONDS, m -> f.apply(m.snapshot).p50Nanos())
                .description("move latency percentile").tags("direction", direction, "quantile", "0.5").register(r);
        TimeGauge.builder("tierkv.move.latency", this, TimeUnit.NANOSECONDS, m -> f.apply(m.snapshot).p99Nanos())
                .description("move latency percentile").tags("direction", direction, "quantile", "0.99").register(r);
    }

    private void eviction(MeterRegistry r, String tier, String cause, ToDoubleFunction<TierStats> f) {
        counter(r, "tierkv.evictions", "blocks evicted per tier and cause", f, "tier", tier, "cause", cause);
    }

    private void failure(MeterRegistry r, String kind, ToDoubleFunction<TierStats> f) {
        counter(r, "tierkv.failures", "refusals, misses and errors by kind", f, "kind", kind);
    }

    private void counter(MeterRegistry r, String name, String help, ToDoubleFunction<TierStats> f, String... tags) {
        FunctionCounter.builder(name, this, m -> f.applyAsDouble(m.snapshot)).description(help).tags(tags).register(r);
    }

    private void gauge(MeterRegistry r, String name, String help, ToDoubleFunction<TierStats> f, String... tags) {
        Gauge.builder(name, this, m -> f.applyAsDouble(m.snapshot)).description(help).tags(tags).register(r);
    }

    private void eventCounter(MeterRegistry r, String name, ToDoubleFunction<KvEventStats> f, String... tags) {
        FunctionCounter.builder(name, this, m -> m.events == null ? 0 : f.applyAsDouble(m.events))
                .description("KV event queue counters").tags(tags).register(r);
    }
}
