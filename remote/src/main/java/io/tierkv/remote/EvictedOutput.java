package io.tierkv.remote;

import io.lettuce.core.output.CommandOutput;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The output of the owned LRU's script: the blocks it evicted, as keys (the script returns their
 * hashes as 32 hex digits). Runs on the Netty event loop; the list is published by Lettuce's
 * future.
 */
final class EvictedOutput extends CommandOutput<RemoteKey, RemoteValue, List<RemoteKey.Block>> {

    /**
     * An empty output.
     *
     * @param codec the store's codec (Lettuce requires one)
     */
    EvictedOutput(RemoteCodec codec) {
        super(codec, new ArrayList<>());
    }

    /**
     * One evicted hash. Called by Lettuce.
     *
     * @param bytes 32 hex digits; anything else is ignored
     */
    @Override
    public void set(ByteBuffer bytes) {
        RemoteKey.Block key = RemoteCodec.parseMember(bytes);
        if (key != null) {
            output.add(key);
        }
    }
}
