package io.tierkv.core.cache;

import java.util.Arrays;

/**
 * A few {@code long}s per block id, for the ids that have them: an open-addressing table of ids
 * with linear probing and backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm R), so
 * its size follows the ids it holds rather than every id the cache may hand out. The cache keeps
 * in one of these what only some ids have (the pin an id holds on its disk record, {@link
 * BlockStates#diskPins}), where an array over every id costs 8 bytes per id whatever is stored.
 *
 * <pre>
 * keys  int[capacity]            (-1 empty), capacity a power of two, load at most 3/4
 * words long[capacity x stride]  the values of the id at the same index
 * </pre>
 * About {@code (4 + 8 x stride) / load} bytes per id held: the table doubles past three quarters
 * full and halves at an eighth, so its load stays between 1/8 and 3/4 (27-160 B per id with two
 * words) and a burst of ids does not keep its memory.
 *
 * <p>Not thread-safe: the owner serialises calls (the cache lock).
 */
final class IdLongs {

    private static final int EMPTY = -1;
    private static final int MIN_CAPACITY = 16;

    private final int stride;
    private int[] keys;
    private long[] words;
    private int size;

    /**
     * Creates an empty table.
     *
     * @param stride longs per id, {@code >= 1}
     */
    IdLongs(int stride) {
        if (stride < 1) {
            throw new IllegalArgumentException("stride: " + stride + " (expected >= 1)");
        }
        this.stride = stride;
        allocate(MIN_CAPACITY);
    }

    /** {@return ids held} */
    int size() {
        return size;
    }

    /** {@return whether the id is held} */
    boolean contains(int id) {
        return indexOf(id) >= 0;
    }

    /**
     * {@return word {@code field} of an id, or {@code absent} if the id is not held}
     *
     * @param id     a block id, {@code >= 0}
     * @param field  {@code [0, stride)}
     * @param absent returned for an id not held
     */
    long get(int id, int field, long absent) {
        int i = indexOf(id);
        return i < 0 ? absent : words[i * stride + field];
    }

    /**
     * Sets word {@code field} of an id, adding the id (its other words 0) if it is not held.
     *
     * @param id    a block id, {@code >= 0}
     * @param field {@code [0, stride)}
     * @param value the word
     */
    void set(int id, int field, long value) {
        int i = indexOf(id);
        if (i < 0) {
            i = add(id);
        }
        words[i * stride + field] = value;
    }

    /**
     * Removes an id and its words.
     *
     * @param id a block id
     * @return whether it was held
     */
    boolean remove(int id) {
        int i = indexOf(id);
        if (i < 0) {
            return false;
        }
        int mask = keys.length - 1;
        int hole = i;
        for (int j = (hole + 1) & mask; keys[j] != EMPTY; j = (j + 1) & mask) {
            int h = home(keys[j], mask);
            boolean movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
            if (movable) {
                keys[hole] = keys[j];
                System.arraycopy(words, j * stride, words, hole * stride, stride);
                hole = j;
            }
        }
        keys[hole] = EMPTY;
        Arrays.fill(words, hole * stride, hole * stride + stride, 0L);
        size--;
        if (keys.length > MIN_CAPACITY && size <= keys.length / 8) {
            rehash(keys.length / 2);
        }
        return true;
    }

    /**
     * Calls {@code action} with every id held, in no particular order; the table must not change
     * meanwhile.
     *
     * @param action takes an id
     */
    void forEachId(java.util.function.IntConsumer action) {
        for (int key : keys) {
            if (key != EMPTY) {
                action.accept(key);
            }
        }
    }

    /** {@return heap bytes of the table's arrays, for the footprint breakdown} */
    long heapBytes() {
        return 4L * keys.length + 8L * words.length;
    }

    private int indexOf(int id) {
        int mask = keys.length - 1;
        for (int i = home(id, mask); ; i = (i + 1) & mask) {
            int key = keys[i];
            if (key == id) {
                return i;
            }
            if (key == EMPTY) {
                return -1;
            }
        }
    }

    private int add(int id) {
        if (size + 1 > keys.length - keys.length / 4) {
            rehash(keys.length * 2);
        }
        int mask = keys.length - 1;
        int i = home(id, mask);
        while (keys[i] != EMPTY) {
            i = (i + 1) & mask;
        }
        keys[i] = id;
        size++;
        return i;
    }

    private void rehash(int capacity) {
        int[] oldKeys = keys;
        long[] oldWords = words;
        allocate(capacity);
        int mask = capacity - 1;
        for (int k = 0; k < oldKeys.length; k++) {
            if (oldKeys[k] != EMPTY) {
                int i = home(oldKeys[k], mask);
                while (keys[i] != EMPTY) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[k];
                System.arraycopy(oldWords, k * stride, words, i * stride, stride);
            }
        }
    }

    private void allocate(int capacity) {
        keys = new int[capacity];
        Arrays.fill(keys, EMPTY);
        words = new long[capacity * stride];
    }

    private static int home(int id, int mask) {
        int h = id * 0x9e3779b9; // Fibonacci hashing (Knuth, 6.4), then the high half folded down
        return (h ^ (h >>> 16)) & mask;
    }
}
