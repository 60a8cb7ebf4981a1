package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import io.tierkv.natives.cuda.CudaError;
import io.tierkv.natives.cuda.cuda_h;
import io.tierkv.natives.hip.HipError;
import io.tierkv.natives.hip.hip_h;
import io.tierkv.natives.libc.Libc;
import io.tierkv.natives.libc.libc_h;
import io.tierkv.natives.testing.BindingGenerator;
import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Ties the jextract-layout bindings to their C declarations: every function listed in
 * {@code native/jextract/includes.txt} (libc, written by hand) or in
 * {@code native/jextract/gpu.symbols} (HIP and CUDA, as {@code GenerateBindings.java --includes}
 * expands it) must have a holder whose {@link FunctionDescriptor} matches the C signature written
 * there, and, where the headers are installed, gcc checks those signatures, the error-code numbers
 * and the constants against the real headers ({@code hip/hip_runtime_api.h},
 * {@code cuda_runtime_api.h}, the C library's).
 */
class BindingSignaturesTest {

    private static final Path INCLUDES = Path.of("jextract/includes.txt");
    private static final Pattern LINE = Pattern.compile("^--include-function (\\w+)\\s+# (.*)$");
    private static List<String> generatedIncludes;

    record Signature(String name, String returnType, List<String> paramTypes, String cDeclaration) {}

    /** The hip and cuda sections, from the generator (run once per test JVM). */
    private static synchronized List<String> generatedIncludes() throws IOException, InterruptedException {
        if (generatedIncludes == null) {
            generatedIncludes = BindingGenerator.runOk("--includes").lines().toList();
        }
        return generatedIncludes;
    }

    /** includes.txt and the generator's includes by section ({@code libc}, {@code hip}, {@code cuda}). */
    static Map<String, List<Signature>> sections() throws IOException, InterruptedException {
        Map<String, List<Signature>> out = new LinkedHashMap<>();
        String section = null;
        List<String> lines = new ArrayList<>(Files.readAllLines(INCLUDES));
        lines.addAll(generatedIncludes());
        for (String line : lines) {
            if (line.startsWith("## ")) {
                section = line.substring(3, line.indexOf('/'));
                out.put(section, new ArrayList<>());
                continue;
            }
            Matcher m = LINE.matcher(line);
            if (m.matches()) {
                out.get(section).add(parse(m.group(1), m.group(2)));
            }
        }
        return out;
    }

    static Signature parse(String name, String decl) {
        int open = decl.indexOf(name + "(");
        String ret = decl.substring(0, open).trim();
        String params = decl.substring(open + name.length() + 1, decl.lastIndexOf(')')).trim();
        List<String> types = new ArrayList<>();
        if (!params.equals("void")) {
            for (String p : params.split(",")) {
                p = p.trim();
                types.add(p.equals("...") ? "..." : p.replaceAll("\\s*\\b\\w+$", "").trim());
            }
        }
        return new Signature(name, ret, types, decl);
    }

    static Class<?> carrier(String cType) {
        String t = cType.replaceAll("\\b(const|enum|struct)\\b", "").replaceAll("\\s+", " ").trim();
        if (t.contains("*")) {
            return MemorySegment.class;
        }
        return switch (t) {
            case "hipStream_t", "hipEvent_t", "cudaStream_t", "cudaEvent_t" -> MemorySegment.class;
            case "size_t", "off_t", "long", "rlim_t" -> long.class;
            case "int", "unsigned int", "hipError_t", "cudaError_t", "hipMemcpyKind", "cudaMemcpyKind",
                    "..." -> int.class; // "...": open's mode argument
            case "float" -> float.class;
            default -> throw new AssertionError("no Java carrier for C type '" + cType + "'");
        };
    }

    static Class<?> carrier(MemoryLayout layout) {
        return layout instanceof AddressLayout ? MemorySegment.class : ((ValueLayout) layout).carrier();
    }

    static FunctionDescriptor descriptor(Class<?> header, String function) throws ReflectiveOperationException {
        Class<?> holder = Class.forName(header.getName() + "$" + function);
        Field desc = holder.getDeclaredField("DESC");
        desc.setAccessible(true);
        return (FunctionDescriptor) desc.get(null);
    }

    @Test
    void everyListedFunctionHasAHolderWhoseDescriptorMatchesItsCSignature() throws Exception {
        Map<String, List<Signature>> sections = sections();
        Map<String, Class<?>> headers = Map.of("hip", hip_h.class, "cuda", cuda_h.class, "libc", libc_h.class);
        assertEquals(headers.keySet(), sections.keySet());
        for (var section : sections.entrySet()) {
            assertFalse(section.getValue().isEmpty(), section.getKey());
            if (!section.getKey().equals("libc")) {
                assertEquals(25, section.getValue().size(), section.getKey() + " functions");
            }
            for (Signature s : section.getValue()) {
                FunctionDescriptor d = descriptor(headers.get(section.getKey()), s.name());
                String where = s.name() + ": " + s.cDeclaration() + " vs " + d;
                assertEquals(carrier(s.returnType()), d.returnLayout().map(BindingSignaturesTest::carrier).orElse(void.class),
                        where);
                assertEquals(s.paramTypes().size(), d.argumentLayouts().size(), where);
                for (int i = 0; i < s.paramTypes().size(); i++) {
                    assertEquals(carrier(s.paramTypes().get(i)), carrier(d.argumentLayouts().get(i)), where);
                }
            }
        }
    }

    @Test
    void theHipSignaturesErrorCodesAndConstantsMatchTheRealHeader() throws Exception {
        Path include = firstExisting("HIP headers (apt-get install libamdhip64-dev)", true,
                "/usr/include/hip/hip_runtime_api.h", "/opt/rocm/include/hip/hip_runtime_api.h");
        StringBuilder c = new StringBuilder("#define __HIP_PLATFORM_AMD__ 1\n#include <hip/hip_runtime_api.h>\n");
        appendSignatures(c, sections().get("hip"), Map.of());
        for (HipError e : HipError.values()) {
            c.append(check(e.cName() + " == " + e.code()));
        }
        appendIntConstants(c, hip_h.class, "hip");
        c.append(check("sizeof(hipError_t) == 4 && sizeof(hipMemcpyKind) == 4 && sizeof(size_t) == 8"));
        compile("hip", c.toString(), "-I" + include.getParent().getParent());
    }

    @Test
    void theCudaSignaturesErrorCodesAndConstantsMatchTheRealHeader() throws Exception {
        List<String> candidates = new ArrayList<>(List.of("/usr/local/cuda/include/cuda_runtime_api.h"));
        try (var dirs = Files.list(Path.of("/usr/local"))) {
            dirs.filter(p -> p.getFileName().toString().startsWith("cuda-")).sorted()
                    .forEach(p -> candidates.add(p.resolve("include/cuda_runtime_api.h").toString()));
        }
        Path include = firstExisting("CUDA headers (a CUDA toolkit in /usr/local/cuda*)", false,
                candidates.toArray(String[]::new));
        StringBuilder c = new StringBuilder("#include <cuda_runtime_api.h>\n");
        appendSignatures(c, sections().get("cuda"), Map.of("cudaMemcpyKind", "enum cudaMemcpyKind"));
        for (CudaError e : CudaError.values()) {
            c.append(check(e.cName() + " == " + e.code()));
        }
        appendIntConstants(c, cuda_h.class, "cuda");
        c.append(check("sizeof(cudaError_t) == 4 && sizeof(enum cudaMemcpyKind) == 4"));
        compile("cuda", c.toString(), "-I" + include.getParent());
    }

    @Test
    void theLibcSignaturesConstantsAndRlimitLayoutMatchTheCLibrary() throws Exception {
        StringBuilder c = new StringBuilder("#define _GNU_SOURCE 1\n#include <fcntl.h>\n#include <unistd.h>\n"
                + "#include <sys/mman.h>\n#include <linux/mman.h>\n#include <sys/resource.h>\n#include <string.h>\n#include <errno.h>\n"
                + "#include <stddef.h>\n"
                // _GNU_SOURCE for mlock2; under it glibc declares getrlimit's resource as an enum
                + "#ifdef __GLIBC__\ntypedef __rlimit_resource_t resource_type;\n#else\ntypedef int resource_type;\n#endif\n");
        appendSignatures(c, sections().get("libc"), Map.of("int resource", "resource_type resource"));
        appendIntConstants(c, libc_h.class, "");
        appendIntConstants(c, Libc.class, "");
        c.append(check("sizeof(struct rlimit) == " + libc_h.RLIMIT_LAYOUT.byteSize()
                + " && offsetof(struct rlimit, rlim_max) == 8 && (long) RLIM_INFINITY == -1L && sizeof(off_t) == 8"));
        compile("libc", c.toString());
    }

    private static void appendSignatures(StringBuilder c, List<Signature> sigs, Map<String, String> rename) {
        c.append("#define SIG(fn, type) _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), type),"
                + " \"signature of \" #fn)\n");
        for (Signature s : sigs) {
            String decl = s.cDeclaration();
            for (var r : rename.entrySet()) {
                decl = decl.replaceAll("\\b" + r.getKey() + "\\b", r.getValue());
            }
            int open = decl.indexOf(s.name() + "(");
            String type = decl.substring(0, open).trim() + " (*)" + decl.substring(open + s.name().length());
            c.append("SIG(").append(s.name()).append(", ").append(type).append(");\n");
        }
    }

    private static void appendIntConstants(StringBuilder c, Class<?> type, String prefix) throws IllegalAccessException {
        for (Field f : type.getFields()) {
            int mod = f.getModifiers();
            if (Modifier.isStatic(mod) && Modifier.isFinal(mod) && f.getType() == int.class
                    && f.getName().startsWith(prefix)) {
                c.append(check(f.getName() + " == " + f.getInt(null)));
            }
        }
    }

    private static String check(String condition) {
        return "_Static_assert(" + condition + ", \"" + condition.replace("\"", "'") + "\");\n";
    }

    private static Path firstExisting(String what, boolean requiredUnderCi, String... paths) {
        for (String p : paths) {
            if (Files.exists(Path.of(p))) {
                return Path.of(p);
            }
        }
        String why = what + " not installed: looked in " + String.join(", ", paths);
        if (requiredUnderCi && "true".equalsIgnoreCase(System.getenv("CI"))) {
            return fail(why + " (CI=true: .ci/run installs them)");
        }
        return abort(why);
    }

    private static void compile(String name, String source, String... flags)
            throws IOException, InterruptedException {
        Path dir = Files.createDirectories(Path.of("target/signature-check"));
        Path file = dir.resolve(name + ".c");
        Files.writeString(file, source);
        List<String> cmd = new ArrayList<>(List.of("gcc", "-fsyntax-only", "-std=c11", "-Werror"));
        cmd.addAll(List.of(flags));
        cmd.add(file.toString());
        Process gcc;
        try {
            gcc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException noGcc) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail("gcc not available (CI=true requires it): " + noGcc.getMessage());
            }
            abort("gcc not available: " + noGcc.getMessage());
            return;
        }
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!gcc.waitFor(120, TimeUnit.SECONDS)) {
            gcc.destroyForcibly();
            fail("gcc timed out on " + file);
        }
        assertEquals(0, gcc.exitValue(), "gcc rejected " + file + ":\n" + out);
    }
}
