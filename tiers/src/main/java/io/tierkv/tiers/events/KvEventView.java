package io.tierkv.tiers.events;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A batch's events read in place, by index: the flyweight a publisher encodes from without an
 * object per event ({@link KvEventListener#onEvents}). Event {@code i} of {@code 0 <= i < size()}
 * is a {@link Type#BLOCK_STORED} (hash, parent hash, token ids, medium), a
 * {@link Type#BLOCK_REMOVED} (hash, medium) or an {@link Type#ALL_BLOCKS_CLEARED} (nothing else);
 * a field an event does not have reads as 0 (or null for the medium). {@link #event(int)} builds
 * the same event as a {@link KvEvent}.
 *
 * <p>Lifetime: a view handed to a listener is valid only during that call (the manager's view
 * reads the event queue's slots, which are reused once the call returns); copy what must outlive
 * it. Not thread-safe: read it on the thread it was given to.
 */
public interface KvEventView {

    /** An event's kind, as vLLM's event class names. */
    enum Type {
        /** {@code BlockStored}: a block became findable in a tier. */
        BLOCK_STORED,
        /** {@code BlockRemoved}: a block stopped being findable in a tier. */
        BLOCK_REMOVED,
        /** {@code AllBlocksCleared}: nothing is findable any more. */
        ALL_BLOCKS_CLEARED
    }

    /** {@return the number of events, >= 0} */
    int size();

    /**
     * {@return event i's kind}
     *
     * @param i the event, {@code 0 <= i < size()}
     * @throws IndexOutOfBoundsException if i is out of range
     */
    Type type(int i);

    /**
     * {@return event i's tier, or null for {@link Type#ALL_BLOCKS_CLEARED}}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    KvMedium medium(int i);

    /**
     * {@return the high 64 bits of event i's block hash (the bits sent on the wire), 0 if none}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    long hashHi(int i);

    /**
     * {@return the low 64 bits of event i's block hash, 0 if none}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    long hashLo(int i);

    /**
     * {@return whether event i is a {@link Type#BLOCK_STORED} of a block with a parent (not its
     * sequence's first block)}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    boolean hasParent(int i);

    /**
     * {@return the high 64 bits of event i's parent block hash, 0 if none}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    long parentHashHi(int i);

    /**
     * {@return the low 64 bits of event i's parent block hash, 0 if none}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    long parentHashLo(int i);

    /**
     * {@return event i's token count: B for a {@link Type#BLOCK_STORED}, 0 otherwise}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    int tokenCount(int i);

    /**
     * {@return token j of event i}
     *
     * @param i the event, {@code 0 <= i < size()}
     * @param j the token, {@code 0 <= j < tokenCount(i)}
     * @throws IndexOutOfBoundsException if j is out of range
     */
    int tokenId(int i, int j);

    /**
     * Copies event i's token ids into an array: the bulk form of {@link #tokenId} for encoders.
     *
     * @param i      the event, {@code 0 <= i < size()}
     * @param dst    where to copy, with room for {@code tokenCount(i)} ids from {@code offset}
     * @param offset the first index written
     * @return {@code tokenCount(i)}, the ids copied
     * @throws IndexOutOfBoundsException if i is out of range or dst has no room
     */
    default int copyTokenIds(int i, int[] dst, int offset) {
        int n = tokenCount(i);
        Objects.checkFromIndexSize(offset, n, dst.length);
        for (int j = 0; j < n; j++) {
            dst[offset + j] = tokenId(i, j);
        }
        return n;
    }

    /**
     * {@return event i's {@code block_size}: B for a {@link Type#BLOCK_STORED}, 0 otherwise}
     *
     * @param i the event, {@code 0 <= i < size()}
     */
    int blockSizeTokens(int i);

    /**
     * Builds event i as an immutable {@link KvEvent} (its token ids copied).
     *
     * @param i the event, {@code 0 <= i < size()}
     * @return the event
     * @throws IndexOutOfBoundsException if i is out of range
     */
    default KvEvent event(int i) {
        return switch (type(i)) {
            case BLOCK_STORED -> {
                int[] tokens = new int[tokenCount(i)];
                copyTokenIds(i, tokens, 0);
                KvBlockHash parent = hasParent(i) ? new KvBlockHash(parentHashHi(i), parentHashLo(i)) : null;
                yield new KvEvent.BlockStored(new KvBlockHash(hashHi(i), hashLo(i)), parent, tokens,
                        blockSizeTokens(i), medium(i));
            }
            case BLOCK_REMOVED -> new KvEvent.BlockRemoved(new KvBlockHash(hashHi(i), hashLo(i)), medium(i));
            case ALL_BLOCKS_CLEARED -> new KvEvent.AllBlocksCleared();
        };
    }

    /** {@return every event built as {@link #event(int)} does, in order; a fresh mutable list} */
    default List<KvEvent> events() {
        List<KvEvent> out = new ArrayList<>(size());
        for (int i = 0; i < size(); i++) {
            out.add(event(i));
        }
        return out;
    }

    /**
     * {@return a view of a list of events (the view of a {@link KvEventBatch}'s events)}
     *
     * @param events the events; read, not copied
     * @throws NullPointerException if events is null
     */
    static KvEventView of(List<KvEvent> events) {
        Objects.requireNonNull(events, "events");
        return new ListEventView(events);
    }
}
