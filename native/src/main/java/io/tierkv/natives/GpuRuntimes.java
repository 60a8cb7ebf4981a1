package io.tierkv.natives;

import io.tierkv.natives.cuda.CudaRuntime;
import io.tierkv.natives.hip.HipRuntime;
import io.tierkv.natives.runtime.LibraryLoader;
import io.tierkv.natives.runtime.NativeAccess;
import java.lang.System.Logger.Level;
import java.lang.foreign.SymbolLookup;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds a usable GPU runtime: HIP first, then CUDA; the first whose library loads and reports at
 * least one device wins. Callers fall back to {@link EmulatedDevice} on empty:
 * {@code GpuRuntimes.detect().orElseGet(EmulatedDevice::new)}.
 *
 * <p>Every candidate passed over is logged (System.Logger {@code io.tierkv.natives.GpuRuntimes},
 * DEBUG, so a start without a GPU is quiet unless that logger's level is lowered; one WARNING per
 * probe when native access is off, naming {@code --enable-native-access}) with the reason:
 * no library (the sonames tried and the linker's message), no device ({@code hipErrorNoDevice} 100,
 * {@code cudaErrorNoDevice} 100), an insufficient driver ({@code cudaErrorInsufficientDriver} 35),
 * a library missing a symbol, or another runtime error.
 *
 * <p>The system property {@code tierkv.gpu} narrows detection: {@code auto} (default),
 * {@code hip}, {@code cuda}, or {@code none} (always empty).
 *
 * <p>Thread-safety: thread-safe; each call probes afresh (libraries stay loaded once loaded).
 */
public final class GpuRuntimes {

    private static final System.Logger LOG = System.getLogger(GpuRuntimes.class.getName());

    private GpuRuntimes() {}

    /** The GPU APIs TierKV binds. */
    public enum Api {
        /** AMD HIP ({@code libamdhip64}). */
        HIP,
        /** NVIDIA CUDA runtime ({@code libcudart}). */
        CUDA
    }

    /**
     * One library to try.
     *
     * @param api which bindings to use
     * @param libraries sonames or paths, tried in order until one loads
     */
    public record Candidate(Api api, List<String> libraries) {
        /**
         * Validates and copies.
         *
         * @throws IllegalArgumentException if {@code libraries} is empty
         */
        public Candidate {
            Objects.requireNonNull(api, "api");
            libraries = List.copyOf(libraries);
            if (libraries.isEmpty()) {
                throw new IllegalArgumentException("libraries: empty (expected at least one name or path)");
            }
        }

        /**
         * HIP with its usual sonames ({@link HipRuntime#SONAMES}).
         *
         * @return the candidate
         */
        public static Candidate hip() {
            return new Candidate(Api.HIP, HipRuntime.SONAMES);
        }

        /**
         * CUDA with its usual sonames ({@link CudaRuntime#SONAMES}).
         *
         * @return the candidate
         */
        public static Candidate cuda() {
            return new Candidate(Api.CUDA, CudaRuntime.SONAMES);
        }
    }

    /**
     * What a probe found.
     *
     * @param runtime the first usable runtime, or empty
     * @param skipped one line per candidate passed over, with the reason
     */
    public record Probe(Optional<GpuRuntime> runtime, List<String> skipped) {
        /** Copies the list. */
        public Probe {
            Objects.requireNonNull(runtime, "runtime");
            skipped = List.copyOf(skipped);
        }
    }

    /**
     * Probes HIP then CUDA with their default sonames, honouring {@code -Dtierkv.gpu}, and logs the
     * candidates passed over.
     *
     * @return the first runtime with a device, or empty
     */
    public static Optional<GpuRuntime> detect() {
        String mode = System.getProperty("tierkv.gpu", "auto").trim().toLowerCase(Locale.ROOT);
        List<Candidate> candidates = switch (mode) {
            case "none" -> List.of();
            case "hip" -> List.of(Candidate.hip());
            case "cuda" -> List.of(Candidate.cuda());
            case "auto" -> List.of(Candidate.hip(), Candidate.cuda());
            default -> {
                LOG.log(Level.WARNING, "unknown -Dtierkv.gpu=" + mode + " (expected auto, hip, cuda or none);"
                        + " using auto");
                yield List.of(Candidate.hip(), Candidate.cuda());
            }
        };
        if (candidates.isEmpty()) {
            LOG.log(Level.DEBUG, "GPU detection disabled by -Dtierkv.gpu=none");
            return Optional.empty();
        }
        return probe(candidates).runtime();
    }

    /**
     * Tries each candidate in order and returns the first runtime that has a device; the reasons
     * for the others are logged and returned.
     *
     * @param candidates libraries to try, in order
     * @return the runtime found (owned by the caller, who closes it) and the reasons for each
     *     candidate passed over
     */
    public static Probe probe(List<Candidate> candidates) {
        List<String> skipped = new ArrayList<>();
        boolean warned = false;
        for (Candidate c : candidates) {
            String why;
            if (!NativeAccess.isEnabled()) {
                why = c.api() + " skipped: " + NativeAccess.disabledReason();
                if (!warned) { // the one warning: the flag is missing, whichever runtime
                    LOG.log(Level.WARNING, "GPU detection skipped: " + NativeAccess.disabledReason());
                    warned = true;
                }
                skipped.add(why);
                continue;
            }
            try {
                LibraryLoader.Loaded lib = LibraryLoader.loadFirst(c.libraries());
                GpuRuntime runtime = open(c.api(), lib.lookup(), lib.name());
                LOG.log(Level.INFO, "using " + runtime);
                return new Probe(Optional.of(runtime), skipped);
            } catch (LibraryNotFoundException e) {
                why = c.api() + " skipped: no library: " + e.getMessage();
            } catch (GpuException e) {
                why = c.api() + " skipped: " + describe(e);
            } catch (UnsatisfiedLinkError e) {
                why = c.api() + " skipped: not a usable runtime library: " + e.getMessage();
            } catch (IllegalCallerException e) {
                why = c.api() + " skipped: " + NativeAccess.disabledReason() + " (" + e.getMessage() + ")";
            }
            LOG.log(Level.DEBUG, why);
            skipped.add(why);
        }
        return new Probe(Optional.empty(), skipped);
    }

    private static GpuRuntime open(Api api, SymbolLookup lookup, String name) {
        return switch (api) {
            case HIP -> HipRuntime.open(lookup, name);
            case CUDA -> CudaRuntime.open(lookup, name);
        };
    }

    private static String describe(GpuException e) {
        String what = switch (e.code()) {
            case 100 -> "no device";
            case 35 -> "insufficient driver (the installed GPU driver is older than this runtime)";
            case 34 -> "stub driver library (no real driver installed)";
            default -> "runtime error";
        };
        return what + ": " + e.getMessage();
    }
}
