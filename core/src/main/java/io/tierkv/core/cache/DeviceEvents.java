package io.tierkv.core.cache;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;
import java.util.ArrayList;
import java.util.List;

/**
 * The device tier's KV events ({@link KvMedium#GPU}). A block is findable on the device while it
 * is SEALED, indexed under its hash and holds a device slot; the cache calls {@link #stored} right
 * after a change that may make that true (a seal that indexed the block, a promotion that gave it
 * a slot) and {@link #removed} right before a change that may end it (its slot released, the block
 * freed or lost). Each call checks the predicate itself, so a call where nothing changed reports
 * nothing. All calls run with the cache lock held; with {@link KvEventSink#NONE} each costs one
 * interface call.
 */
// Every method runs with the cache lock held by a caller in another class (PagedKvCache, Sequence,
// TierControl), which Error Prone cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class DeviceEvents {

    private final PagedKvCache cache;
    /** Where events go. */
    @GuardedBy("cache.lock") private KvEventSink sink = KvEventSink.NONE;

    DeviceEvents(PagedKvCache cache) {
        this.cache = cache;
    }

    /** Sets where events go ({@link TierControl#setEventSink}). Lock held. */
    void setSink(KvEventSink s) {
        sink = s;
    }

    /** Whether a block is findable on the device: sealed, indexed, with a slot. Lock held. */
    boolean findable(int id) {
        BlockStates b = cache.blocks;
        return b.state(id) == BlockStates.SEALED && b.indexed(id) && b.slot[id] >= 0;
    }

    /** Reports a block that may just have become findable on the device. Lock held. */
    void stored(int id) {
        if (sink.enabled() && findable(id)) {
            sink.blockStored(KvMedium.GPU, cache.blocks.hashHi[id], cache.blocks.hashLo[id], cache.identities.of(id));
        }
    }

    /** Reports a block that may be about to stop being findable on the device (before the change). Lock held. */
    void removed(int id) {
        if (sink.enabled() && findable(id)) {
            sink.blockRemoved(KvMedium.GPU, cache.blocks.hashHi[id], cache.blocks.hashLo[id]);
        }
    }

    /** {@return the hashes findable on the device now, one per block. Lock held} */
    List<KvBlockHash> findableHashes() {
        List<KvBlockHash> out = new ArrayList<>();
        BlockStates b = cache.blocks;
        for (int id = 0; id < b.capacity(); id++) {
            if (findable(id)) {
                out.add(new KvBlockHash(b.hashHi[id], b.hashLo[id]));
            }
        }
        return out;
    }
}
