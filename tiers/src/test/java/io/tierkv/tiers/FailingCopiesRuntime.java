package io.tierkv.tiers;

import io.tierkv.natives.DeviceBuffer;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.GpuEvent;
import io.tierkv.natives.GpuException;
import io.tierkv.natives.GpuStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * The emulated device, whose host-to-device or device-to-host copies throw while {@link
 * #failHostToDevice} or {@link #failDeviceToHost} is set (a device gone, a driver error), before
 * they are issued, and whose events report a failed copy while {@link #failEvents} is set.
 * Everything else is the emulated device's own.
 */
final class FailingCopiesRuntime extends DelegatingRuntime {

    /** While set, every host-to-device copy throws {@link UncheckedIOException} ("injected"). */
    volatile boolean failHostToDevice;
    /** While set, every device-to-host copy throws {@link UncheckedIOException} ("injected"). */
    volatile boolean failDeviceToHost;
    /** While set, every event this runtime's streams recorded reports a failed copy ({@link GpuException}). */
    volatile boolean failEvents;

    /** @param device the device every call goes to */
    FailingCopiesRuntime(EmulatedDevice device) {
        super(device);
    }

    @Override
    public GpuStream createStream() {
        GpuStream stream = device.createStream();
        return new GpuStream() {
            @Override
            public void copyHostToDevice(MemorySegment src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
                if (failHostToDevice) {
                    throw new UncheckedIOException(new IOException("injected"));
                }
                stream.copyHostToDevice(src, srcOffset, dst, dstOffset, bytes);
            }

            @Override
            public void copyDeviceToHost(DeviceBuffer src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
                if (failDeviceToHost) {
                    throw new UncheckedIOException(new IOException("injected"));
                }
                stream.copyDeviceToHost(src, srcOffset, dst, dstOffset, bytes);
            }

            @Override
            public void copyDeviceToDevice(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
                stream.copyDeviceToDevice(src, srcOffset, dst, dstOffset, bytes);
            }

            @Override
            public GpuEvent record() {
                return failable(stream.record());
            }

            @Override
            public Optional<GpuEvent> recordIfPending() {
                return stream.recordIfPending().map(FailingCopiesRuntime.this::failable);
            }

            @Override
            public void synchronize() {
                stream.synchronize();
            }

            @Override
            public void close() {
                stream.close();
            }
        };
    }

    /** {@return the event, reporting a failed copy while {@link #failEvents} is set} */
    private GpuEvent failable(GpuEvent event) {
        return new GpuEvent() {
            @Override
            public boolean isComplete() {
                failIfArmed();
                return event.isComplete();
            }

            @Override
            public void synchronize() {
                failIfArmed();
                event.synchronize();
            }

            @Override
            public float elapsedMillisSince(GpuEvent start) {
                return event.elapsedMillisSince(start);
            }

            @Override
            public void close() {
                event.close();
            }
        };
    }

    private void failIfArmed() {
        if (failEvents) {
            throw new GpuException("EMULATED", 1, "injected", "a copy before the event failed");
        }
    }
}
