package io.tierkv.core;

/**
 * Element type of the keys and values stored in a block.
 *
 * <p>FP8_E4M3 follows the OCP 8-bit floating point specification (E4M3); this library only moves
 * bytes, so a dtype matters for its size alone.
 */
public enum DType {
    /** IEEE 754 binary16, 2 bytes. */
    F16(2),
    /** bfloat16, 2 bytes. */
    BF16(2),
    /** IEEE 754 binary32, 4 bytes. */
    F32(4),
    /** OCP FP8 E4M3, 1 byte. */
    FP8_E4M3(1),
    /** Signed 8-bit integer (quantised KV), 1 byte. */
    INT8(1);

    private final int sizeBytes;

    DType(int sizeBytes) {
        this.sizeBytes = sizeBytes;
    }

    /**
     * Size of one element.
     *
     * @return bytes per element, 1, 2 or 4
     */
    public int sizeBytes() {
        return sizeBytes;
    }
}
