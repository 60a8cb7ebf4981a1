package io.tierkv.tiers.events;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import java.util.List;

/** {@link KvEventView#of}'s view of a list of events; as thread-safe as the list. */
final class ListEventView implements KvEventView {

    private final List<KvEvent> events;

    ListEventView(List<KvEvent> events) {
        this.events = events;
    }

    @Override
    public int size() {
        return events.size();
    }

    @Override
    public Type type(int i) {
        return switch (events.get(i)) {
            case KvEvent.BlockStored s -> Type.BLOCK_STORED;
            case KvEvent.BlockRemoved r -> Type.BLOCK_REMOVED;
            case KvEvent.AllBlocksCleared c -> Type.ALL_BLOCKS_CLEARED;
        };
    }

    @Override
    public KvMedium medium(int i) {
        return switch (events.get(i)) {
            case KvEvent.BlockStored s -> s.medium();
            case KvEvent.BlockRemoved r -> r.medium();
            case KvEvent.AllBlocksCleared c -> null;
        };
    }

    private KvBlockHash hash(int i) {
        return switch (events.get(i)) {
            case KvEvent.BlockStored s -> s.hash();
            case KvEvent.BlockRemoved r -> r.hash();
            case KvEvent.AllBlocksCleared c -> null;
        };
    }

    private KvBlockHash parent(int i) {
        return events.get(i) instanceof KvEvent.BlockStored s ? s.parentHash() : null;
    }

    @Override
    public long hashHi(int i) {
        KvBlockHash h = hash(i);
        return h == null ? 0 : h.hi();
    }

    @Override
    public long hashLo(int i) {
        KvBlockHash h = hash(i);
        return h == null ? 0 : h.lo();
    }

    @Override
    public boolean hasParent(int i) {
        return parent(i) != null;
    }

    @Override
    public long parentHashHi(int i) {
        KvBlockHash p = parent(i);
        return p == null ? 0 : p.hi();
    }

    @Override
    public long parentHashLo(int i) {
        KvBlockHash p = parent(i);
        return p == null ? 0 : p.lo();
    }

    @Override
    public int tokenCount(int i) {
        return events.get(i) instanceof KvEvent.BlockStored s ? s.tokenIds().length : 0;
    }

    @Override
    public int tokenId(int i, int j) {
        if (events.get(i) instanceof KvEvent.BlockStored s) {
            return s.tokenIds()[j];
        }
        throw new IndexOutOfBoundsException("token " + j + " of event " + i + " (it has no tokens)");
    }

    @Override
    public int copyTokenIds(int i, int[] dst, int offset) {
        if (events.get(i) instanceof KvEvent.BlockStored s) {
            System.arraycopy(s.tokenIds(), 0, dst, offset, s.tokenIds().length);
            return s.tokenIds().length;
        }
        return 0;
    }

    @Override
    public int blockSizeTokens(int i) {
        return events.get(i) instanceof KvEvent.BlockStored s ? s.blockSizeTokens() : 0;
    }
}
