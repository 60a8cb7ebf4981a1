package io.tierkv.tiers;

import io.tierkv.natives.DeviceBuffer;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.GpuStream;
import io.tierkv.natives.MemoryInfo;
import io.tierkv.natives.PinnedHostBuffer;

/** The emulated device behind a runtime of its own, for tests that change one of its answers by overriding it. */
class DelegatingRuntime implements GpuRuntime {

    /** The device every call goes to unless overridden. */
    final EmulatedDevice device;

    /** @param device the device every call goes to */
    DelegatingRuntime(EmulatedDevice device) {
        this.device = device;
    }

    @Override
    public String name() {
        return device.name();
    }

    @Override
    public int deviceCount() {
        return device.deviceCount();
    }

    @Override
    public MemoryInfo memoryInfo() {
        return device.memoryInfo();
    }

    @Override
    public boolean deviceMemoryIsHostMemory() {
        return device.deviceMemoryIsHostMemory();
    }

    @Override
    public DeviceBuffer allocateDevice(long bytes) {
        return device.allocateDevice(bytes);
    }

    @Override
    public PinnedHostBuffer allocatePinnedHost(long bytes) {
        return device.allocatePinnedHost(bytes);
    }

    @Override
    public GpuStream createStream() {
        return device.createStream();
    }

    @Override
    public void close() {
        device.close();
    }
}
