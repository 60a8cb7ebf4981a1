package io.tierkv.core.policy;

/**
 * A deliberately plain model of a policy, built on java.util collections, against which the
 * array-based implementations are compared operation by operation ({@link Differential}).
 */
interface ReferencePolicy {

    void admit(int id, int priority, long key);

    void access(int id);

    void remove(int id);

    int victim();

    boolean contains(int id);

    int size();
}
