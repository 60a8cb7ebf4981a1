package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GpuCheckTest {

    @Test
    void theDeviceCheckRoundTripsWithMatchingChecksumsOnTheEmulatedDevice() {
        assertEquals(0, GpuCheck.run(new String[] {"--emulated", "--mib", "16", "--block-kib", "256", "--passes", "1"}));
    }
}
