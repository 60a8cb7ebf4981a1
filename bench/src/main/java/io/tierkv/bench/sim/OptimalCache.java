package io.tierkv.bench.sim;

import java.util.Arrays;

/**
 * Belady's MIN over dense content ids: the cached blocks in an indexed max-heap keyed by next use.
 * A miss when full evicts the block used farthest in the future, unless the missed block itself
 * is used later than all of them, in which case it is not kept. O(log capacity) per access.
 */
final class OptimalCache {

    private final int capacity;
    private final int[] heap;
    private final int[] heapIndex;
    private final int[] nextUse;
    private int size;

    /**
     * Creates an empty cache.
     *
     * @param contents number of content ids
     * @param capacity blocks it may hold, {@code > 0}
     */
    OptimalCache(int contents, int capacity) {
        this.capacity = capacity;
        this.heap = new int[capacity];
        this.heapIndex = new int[contents];
        this.nextUse = new int[contents];
        Arrays.fill(heapIndex, -1);
    }

    /**
     * Tells whether a block is cached.
     *
     * @param content content id
     * @return whether it is cached
     */
    boolean contains(int content) {
        return heapIndex[content] >= 0;
    }

    /**
     * The number of cached blocks.
     *
     * @return cached blocks, at most the capacity
     */
    int size() {
        return size;
    }

    /**
     * Uses a block: a hit updates its next use; a miss caches it, evicting the farthest-used block
     * when full, or passes it by when it is itself used farthest.
     *
     * @param content content id
     * @param next    index of its following use, {@link BlockTrace#NEVER} if none
     */
    void access(int content, int next) {
        int i = heapIndex[content];
        if (i >= 0) {
            nextUse[content] = next;
            siftUp(i);
            siftDown(heapIndex[content]);
            return;
        }
        if (size < capacity) {
            nextUse[content] = next;
            heap[size] = content;
            heapIndex[content] = size;
            siftUp(size++);
            return;
        }
        int top = heap[0];
        if (nextUse[top] <= next) {
            return; // bypass: the missed block is needed later than anything cached
        }
        heapIndex[top] = -1;
        nextUse[content] = next;
        heap[0] = content;
        heapIndex[content] = 0;
        siftDown(0);
    }

    private void siftUp(int i) {
        int c = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            int pc = heap[parent];
            if (nextUse[pc] >= nextUse[c]) {
                break;
            }
            heap[i] = pc;
            heapIndex[pc] = i;
            i = parent;
        }
        heap[i] = c;
        heapIndex[c] = i;
    }

    private void siftDown(int i) {
        int c = heap[i];
        while (true) {
            int l = 2 * i + 1;
            if (l >= size) {
                break;
            }
            int child = l + 1 < size && nextUse[heap[l + 1]] > nextUse[heap[l]] ? l + 1 : l;
            if (nextUse[heap[child]] <= nextUse[c]) {
                break;
            }
            heap[i] = heap[child];
            heapIndex[heap[i]] = i;
            i = child;
        }
        heap[i] = c;
        heapIndex[c] = i;
    }
}
