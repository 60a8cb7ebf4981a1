package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.natives.runtime.NativeAccess;
import io.tierkv.natives.testing.ChildJvm;
import io.tierkv.natives.testing.FakeGpuLibrary;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class GpuRuntimesTest {

    private String fake;

    @BeforeEach
    void resetFake() {
        fake = FakeGpuLibrary.path().toString();
        FakeGpuLibrary.reset();
    }

    private GpuRuntimes.Candidate fakeHip() {
        return new GpuRuntimes.Candidate(GpuRuntimes.Api.HIP, List.of("/nonexistent/libamdhip64.so", fake));
    }

    private GpuRuntimes.Candidate fakeCuda() {
        return new GpuRuntimes.Candidate(GpuRuntimes.Api.CUDA, List.of(fake));
    }

    @Test
    void theFirstCandidateWithADeviceWinsAndLaterOnesAreNotTried() {
        GpuRuntimes.Probe p = GpuRuntimes.probe(List.of(fakeHip(), fakeCuda()));
        try (GpuRuntime rt = p.runtime().orElseThrow()) {
            assertEquals("HIP", rt.name());
            assertEquals(List.of(), p.skipped());
            assertEquals(1, FakeGpuLibrary.calls("getDeviceCount"));
        }
    }

    @Test
    void hipWithoutADeviceFallsThroughToCudaAndSaysWhy() {
        FakeGpuLibrary.setDevices(FakeGpuLibrary.HIP, 0, 100, true);
        GpuRuntimes.Probe p = GpuRuntimes.probe(List.of(fakeHip(), fakeCuda()));
        try (GpuRuntime rt = p.runtime().orElseThrow()) {
            assertEquals("CUDA", rt.name());
            assertEquals(List.of("HIP skipped: no device: HIP hipErrorNoDevice (100): hipGetDeviceCount(&count) on "
                    + fake + ": no ROCm-capable device is detected"), p.skipped());
        }
    }

    @Test
    void anInsufficientCudaDriverIsNamedAndDetectionEndsEmpty() {
        FakeGpuLibrary.setDevices(FakeGpuLibrary.HIP, 0, 100, true);
        FakeGpuLibrary.setDevices(FakeGpuLibrary.CUDA, 2, 35, false);
        GpuRuntimes.Probe p = GpuRuntimes.probe(List.of(fakeHip(), fakeCuda()));
        assertEquals(Optional.empty(), p.runtime());
        assertEquals(2, p.skipped().size());
        assertEquals("CUDA skipped: insufficient driver (the installed GPU driver is older than this runtime):"
                + " CUDA cudaErrorInsufficientDriver (35): cudaGetDeviceCount(&count) on " + fake
                + ": CUDA driver version is insufficient for CUDA runtime version", p.skipped().get(1));
    }

    @Test
    void aMissingLibraryIsSkippedWithEveryNameTried() {
        GpuRuntimes.Probe p = GpuRuntimes.probe(List.of(new GpuRuntimes.Candidate(GpuRuntimes.Api.HIP,
                List.of("/nonexistent/libamdhip64.so", "libamdhip64-not-there.so.9"))));
        assertEquals(Optional.empty(), p.runtime());
        String why = p.skipped().getFirst();
        assertTrue(why.startsWith("HIP skipped: no library: no library loaded: /nonexistent/libamdhip64.so ("), why);
        assertTrue(why.contains(", libamdhip64-not-there.so.9 ("), why);
    }

    @Test
    void aLibraryWithoutTheRuntimeSymbolsIsSkipped() {
        GpuRuntimes.Probe p = GpuRuntimes.probe(List.of(
                new GpuRuntimes.Candidate(GpuRuntimes.Api.CUDA, List.of("libc.so.6"))));
        assertEquals(List.of("CUDA skipped: not a usable runtime library: unresolved symbol cudaGetDeviceCount"
                + " in libc.so.6"), p.skipped());
    }

    @Test
    void detectionCanBeSwitchedOffByProperty() {
        String old = System.getProperty("tierkv.gpu");
        System.setProperty("tierkv.gpu", "none");
        try {
            assertEquals(Optional.empty(), GpuRuntimes.detect());
        } finally {
            if (old == null) {
                System.clearProperty("tierkv.gpu");
            } else {
                System.setProperty("tierkv.gpu", old);
            }
        }
    }

    @Test
    void candidatesNeedAtLeastOneLibrary() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new GpuRuntimes.Candidate(GpuRuntimes.Api.HIP, List.of()));
        assertEquals("libraries: empty (expected at least one name or path)", e.getMessage());
    }

    @Test
    void withoutNativeAccessDetectionIsEmptyAndNamesTheFlag() throws Exception {
        ChildJvm.Result r = ChildJvm.run(List.of(), List.of(), ProbeMain.class, fake);
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("runtime=EMPTY"), r.output());
        // the child runs as this JVM does: in module io.tierkv.natives on the module path, else unnamed
        String module = NativeAccess.class.getModule().isNamed() ? "module io.tierkv.natives" : "unnamed module";
        assertTrue(r.output().contains("HIP skipped: native access is not enabled for " + module), r.output());
        assertTrue(r.output().contains("start the JVM with " + NativeAccess.flag()), r.output());
    }

    /** Child JVM entry: probes the fake library and prints the outcome. */
    public static final class ProbeMain {
        private ProbeMain() {}

        /**
         * Probes.
         *
         * @param args the fake library path
         */
        public static void main(String[] args) {
            GpuRuntimes.Probe p = GpuRuntimes.probe(List.of(
                    new GpuRuntimes.Candidate(GpuRuntimes.Api.HIP, List.of(args[0]))));
            System.out.println("runtime=" + p.runtime().map(GpuRuntime::name).orElse("EMPTY"));
            p.skipped().forEach(System.out::println);
            p.runtime().ifPresent(GpuRuntime::close);
        }
    }
}
