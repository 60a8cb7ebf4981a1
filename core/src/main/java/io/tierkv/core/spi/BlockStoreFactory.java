package io.tierkv.core.spi;

/**
 * Opens a {@link BlockStore} for one layout: what a runtime hands the tier manager's builder so
 * that the manager, which owns the store's lifetime, opens it when it is built and closes it with
 * itself. {@code io.tierkv.remote.RemoteOptions} is one.
 */
@FunctionalInterface
public interface BlockStoreFactory {

    /**
     * Opens the store.
     *
     * @param layoutFingerprint the layout's {@code KvLayout.fingerprint()}, which the store keeps
     *                          with every value and checks on every read
     * @return the open store, owned by the caller
     * @throws io.tierkv.core.error.TierKvException or another unchecked exception (naming where the
     *     store is) if it cannot be opened
     */
    BlockStore open(long layoutFingerprint);
}
