package io.tierkv.core.policy;

/**
 * A fixed set of doubly linked lists threaded through shared {@code int} arrays: node {@code n}
 * (a block id in {@code [0, nodes)}) is in at most one list at a time, and its links live in
 * {@code prev[n]} and {@code next[n]}. Every operation is O(1) and allocates nothing; the arrays
 * are sized once at construction.
 *
 * <p>Direction: the <em>first</em> node of a list is its oldest (the next to leave), the
 * <em>last</em> its newest. {@link #next} walks from older to newer, {@link #prev} back.
 *
 * <p>{@code prev[n]} holds the previous node plus 2: 1 means none (the first of its list) and 0
 * that {@code n} is in no list, so the zeroed arrays start with every node unlinked and
 * {@link #linked} answers membership without an array of its own (1 B per node less, issue 19
 * part 2). The lists do not record which list a node is in: the caller passes the list and keeps
 * that fact itself where it has several (a policy knows in which queue a candidate is). Passing
 * the wrong list corrupts the structure, so callers check membership first. Not thread-safe.
 */
final class IntrusiveLists {

    /** The "no node" link value. */
    static final int NIL = -1;
    /** {@code prev[n]} of a node in no list; a link {@code p} is stored as {@code p + 2}. */
    private static final int UNLINKED = 0;

    private final int[] prev;
    private final int[] next;
    private final int[] head;
    private final int[] tail;
    private final int[] size;

    /**
     * Creates {@code lists} empty lists over node ids {@code [0, nodes)}.
     *
     * @param nodes number of node ids, {@code > 0}
     * @param lists number of lists, {@code > 0}
     */
    IntrusiveLists(int nodes, int lists) {
        prev = new int[nodes];
        next = new int[nodes];
        head = new int[lists];
        tail = new int[lists];
        size = new int[lists];
        java.util.Arrays.fill(head, NIL);
        java.util.Arrays.fill(tail, NIL);
    }

    /**
     * Appends {@code node} as the newest of {@code list}; the node must be in no list.
     *
     * @param list the list
     * @param node the node
     */
    void addLast(int list, int node) {
        int t = tail[list];
        prev[node] = t + 2;
        next[node] = NIL;
        if (t == NIL) {
            head[list] = node;
        } else {
            next[t] = node;
        }
        tail[list] = node;
        size[list]++;
    }

    /**
     * Unlinks {@code node}, which must be in {@code list}.
     *
     * @param list the list holding the node
     * @param node the node
     */
    void remove(int list, int node) {
        int p = prev[node] - 2;
        int n = next[node];
        if (p == NIL) {
            head[list] = n;
        } else {
            next[p] = n;
        }
        if (n == NIL) {
            tail[list] = p;
        } else {
            prev[n] = p + 2;
        }
        prev[node] = UNLINKED;
        next[node] = NIL;
        size[list]--;
    }

    /**
     * Moves {@code node}, which must be in {@code list}, to the newest end of the same list.
     *
     * @param list the list holding the node
     * @param node the node
     */
    void moveToLast(int list, int node) {
        if (tail[list] != node) {
            remove(list, node);
            addLast(list, node);
        }
    }

    /**
     * Moves every node of {@code src} after the newest node of {@code dst}, keeping their order;
     * {@code src} becomes empty. O(1).
     *
     * @param dst the list that grows
     * @param src the list that empties
     */
    void appendAll(int dst, int src) {
        if (dst == src || size[src] == 0) {
            return;
        }
        if (size[dst] == 0) {
            head[dst] = head[src];
        } else {
            next[tail[dst]] = head[src];
            prev[head[src]] = tail[dst] + 2;
        }
        tail[dst] = tail[src];
        size[dst] += size[src];
        head[src] = NIL;
        tail[src] = NIL;
        size[src] = 0;
    }

    /**
     * Tells whether a node is in a list.
     *
     * @param node a node id
     * @return whether it is in one of the lists
     */
    boolean linked(int node) {
        return prev[node] != UNLINKED;
    }

    /**
     * The oldest node of a list.
     *
     * @param list the list
     * @return the oldest node of {@code list}, or {@link #NIL} when it is empty
     */
    int first(int list) {
        return head[list];
    }

    /**
     * The neighbour one step newer.
     *
     * @param node a node in some list
     * @return the node after {@code node}, or {@link #NIL} at the newest end
     */
    int next(int node) {
        return next[node];
    }

    /**
     * The length of a list.
     *
     * @param list the list
     * @return the number of nodes in {@code list}
     */
    int size(int list) {
        return size[list];
    }
}
