import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import ca.uhn.fhir.context.FhirContext;
import ca.uhn.fhir.parser.IParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.commons.lang3.tuple.Pair;
import org.cqframework.cql.cql2elm.CqlCompilerException;
import org.cqframework.cql.cql2elm.CqlCompilerOptions;
import org.cqframework.cql.cql2elm.CqlTranslator;
import org.cqframework.cql.cql2elm.LibraryManager;
import org.cqframework.cql.cql2elm.LibrarySourceProvider;
import org.cqframework.cql.cql2elm.ModelManager;
import org.cqframework.cql.cql2elm.quick.FhirLibrarySourceProvider;
import org.cqframework.cql.elm.tracking.TrackBack;
import org.hl7.elm.r1.ExpressionDef;
import org.hl7.elm.r1.FunctionDef;
import org.hl7.elm.r1.Library;
import org.hl7.elm.r1.VersionedIdentifier;
import org.hl7.fhir.instance.model.api.IBaseResource;
import org.hl7.fhir.instance.model.api.IPrimitiveType;
import org.hl7.fhir.r4.model.Bundle;
import org.hl7.fhir.r4.model.CodeableConcept;
import org.hl7.fhir.r4.model.Coding;
import org.hl7.fhir.r4.model.Reference;
import org.hl7.fhir.r4.model.Resource;
import org.opencds.cqf.cql.engine.data.CompositeDataProvider;
import org.opencds.cqf.cql.engine.data.DataProvider;
import org.opencds.cqf.cql.engine.execution.CqlEngine;
import org.opencds.cqf.cql.engine.execution.Environment;
import org.opencds.cqf.cql.engine.execution.EvaluationResult;
import org.opencds.cqf.cql.engine.execution.ExpressionResult;
import org.opencds.cqf.cql.engine.fhir.model.R4FhirModelResolver;
import org.opencds.cqf.cql.engine.retrieve.RetrieveProvider;
import org.opencds.cqf.cql.engine.runtime.Code;
import org.opencds.cqf.cql.engine.runtime.Interval;

/**
 * CQL to ELM translation and in-memory CQL evaluation over FHIR R4 patient bundles.
 *
 * translate OUT.json DIR LIB.cql [LIB.cql ...]
 *     Translates each library (FHIR 4.0.1 model info and FHIRHelpers 4.0.1 from the `quick`
 *     jar; other included libraries from the .cql files in DIR, matched on their
 *     `library NAME version 'V'` header) and writes LIB.json (ELM JSON) next to each .cql that
 *     has no errors. OUT.json: {"translator", "libraries": [{"file", "library", "version",
 *     "errors": [{"severity", "line", "column", "message"}], "error_count", "elm"}]};
 *     error_count counts severity "error" only; "elm" is null when there were errors.
 *
 * evaluate OUT.json LIB.cql PATIENTS.json EVAL_DATETIME [DEFINE ...]
 *     PATIENTS.json: a JSON array of FHIR R4 Bundles, each with one Patient and that patient's
 *     resources. Compiles LIB.cql once (included libraries from its folder), then evaluates it
 *     in context Patient for every patient with Now() = EVAL_DATETIME (ISO date-time, or a date
 *     meaning midnight UTC). OUT.json: {"engine", "evaluation_datetime", "results":
 *     {patientId: {define: value}}}; values: booleans, numbers, strings and null as such,
 *     FHIR resources as "Type/id", FHIR primitives as their value, other FHIR datatypes as
 *     their FHIR JSON text, lists as JSON arrays, anything else (CQL DateTime, Quantity,
 *     Code, Interval, Tuple...) as its toString(). One patient's failure gives {"__error__": message}.
 *     A library with translation errors gives {"engine", "errors", "error_count", "results": {}}
 *     and exit status 1.
 *
 * Exit 0 when it ran, 1 when evaluate could not compile the library, 2 on usage errors.
 * Retrieves that filter by value set are refused (no terminology service here); retrieves with
 * codes match any coding of the resource's code path on system and code.
 */
public final class CqlTool {
    private static final String VERSION = "3.29.0";
    private static final String FHIR_MODEL_URI = "http://hl7.org/fhir";
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private CqlTool() {}

    public static void main(String[] args) throws Exception {
        // Keep stdout clean for callers: stray library prints go to stderr.
        PrintStream stdout = System.out;
        System.setOut(System.err);
        int rc;
        if (args.length >= 3 && args[0].equals("translate")) {
            rc = translate(Path.of(args[1]), Path.of(args[2]), List.of(args).subList(3, args.length));
        } else if (args.length >= 5 && args[0].equals("evaluate")) {
            rc = evaluate(Path.of(args[1]), Path.of(args[2]), Path.of(args[3]), args[4],
                    List.of(args).subList(5, args.length));
        } else {
            System.err.println("usage: CqlTool translate OUT.json DIR LIB.cql [LIB.cql ...]\n"
                    + "       CqlTool evaluate OUT.json LIB.cql PATIENTS.json EVAL_DATETIME [DEFINE ...]");
            rc = 2;
        }
        stdout.flush();
        System.exit(rc);
    }

    // ---------------------------------------------------------------- library manager

    /** Serves the .cql files of one folder by the name (and version) in their library header. */
    static final class DirectorySourceProvider implements LibrarySourceProvider {
        private static final Pattern HEADER = Pattern.compile(
                "^\\s*library\\s+(\"[^\"]+\"|[A-Za-z_][A-Za-z0-9_.]*)(?:\\s+version\\s+'([^']*)')?",
                Pattern.MULTILINE);
        private final Map<String, List<String[]>> byName = new HashMap<>(); // name -> [version, path]

        DirectorySourceProvider(Path dir) {
            if (dir == null || !Files.isDirectory(dir)) {
                return;
            }
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.cql")) {
                for (Path f : files) {
                    String[] id = header(f);
                    if (id != null) {
                        byName.computeIfAbsent(id[0], k -> new ArrayList<>())
                                .add(new String[] {id[1], f.toString()});
                    }
                }
            } catch (IOException e) {
                System.err.println("CqlTool: cannot list " + dir + ": " + e.getMessage());
            }
        }

        static String[] header(Path f) {
            try {
                String text = stripComments(Files.readString(f, StandardCharsets.UTF_8));
                Matcher m = HEADER.matcher(text);
                if (!m.find()) {
                    return null;
                }
                String name = m.group(1);
                if (name.startsWith("\"")) {
                    name = name.substring(1, name.length() - 1);
                }
                return new String[] {name, m.group(2)};
            } catch (IOException e) {
                return null;
            }
        }

        private static String stripComments(String text) {
            return text.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("(?m)//.*$", "");
        }

        @Override
        public InputStream getLibrarySource(VersionedIdentifier id) {
            List<String[]> candidates = byName.get(id.getId());
            if (candidates == null) {
                return null;
            }
            for (String[] c : candidates) {
                if (id.getVersion() == null || id.getVersion().equals(c[0])) {
                    try {
                        return new ByteArrayInputStream(Files.readAllBytes(Path.of(c[1])));
                    } catch (IOException e) {
                        return null;
                    }
                }
            }
            return null;
        }
    }

    static LibraryManager libraryManager(Path dir) {
        ModelManager modelManager = new ModelManager(); // FHIR 4.0.1 model info: `quick` via ServiceLoader
        LibraryManager manager = new LibraryManager(modelManager, CqlCompilerOptions.defaultOptions());
        manager.getLibrarySourceLoader().registerProvider(new FhirLibrarySourceProvider());
        manager.getLibrarySourceLoader().registerProvider(new DirectorySourceProvider(dir));
        return manager;
    }

    /** One translation: the translator (null when it threw) and its messages as JSON. */
    static final class Translation {
        CqlTranslator translator;
        String name;
        String version;
        final ArrayNode errors = NODES.arrayNode();
        int errorCount;
    }

    static Translation compile(Path file, LibraryManager manager) {
        Translation t = new Translation();
        String[] header = DirectorySourceProvider.header(file);
        if (header != null) {
            t.name = header[0];
            t.version = header[1];
        }
        try {
            t.translator = CqlTranslator.fromFile(file.toFile(), manager);
        } catch (Exception e) {
            ObjectNode err = t.errors.addObject();
            err.put("severity", "error");
            err.putNull("line");
            err.putNull("column");
            err.put("message", e.getClass().getSimpleName() + ": " + e.getMessage());
            t.errorCount = 1;
            return t;
        }
        Library elm = t.translator.toELM();
        if (elm != null && elm.getIdentifier() != null) {
            t.name = elm.getIdentifier().getId();
            t.version = elm.getIdentifier().getVersion();
        }
        for (CqlCompilerException ex : t.translator.getExceptions()) {
            CqlCompilerException.ErrorSeverity sev = ex.getSeverity();
            String s = sev == CqlCompilerException.ErrorSeverity.Warning ? "warning"
                    : sev == CqlCompilerException.ErrorSeverity.Info ? "info" : "error";
            if (s.equals("error")) {
                t.errorCount++;
            }
            ObjectNode err = t.errors.addObject();
            err.put("severity", s);
            TrackBack tb = ex.getLocator();
            String msg = ex.getMessage();
            if (tb != null) {
                err.put("line", tb.getStartLine());
                err.put("column", tb.getStartChar());
                VersionedIdentifier in = tb.getLibrary();
                if (in != null && in.getId() != null && t.name != null && !in.getId().equals(t.name)) {
                    msg = "[in " + in.getId() + (in.getVersion() == null ? "" : " " + in.getVersion()) + "] " + msg;
                }
            } else {
                err.putNull("line");
                err.putNull("column");
            }
            err.put("message", msg);
        }
        return t;
    }

    // ---------------------------------------------------------------- translate

    static int translate(Path out, Path dir, List<String> libs) throws IOException {
        LibraryManager manager = libraryManager(dir);
        ObjectNode root = NODES.objectNode();
        root.put("translator", VERSION);
        ArrayNode libraries = root.putArray("libraries");
        for (String lib : libs) {
            Path file = Path.of(lib);
            Translation t = compile(file, manager);
            ObjectNode entry = libraries.addObject();
            entry.put("file", lib);
            entry.put("library", t.name);
            entry.put("version", t.version);
            Path elmPath = elmPathFor(file);
            String elmJson = null;
            if (t.errorCount == 0 && t.translator != null) {
                try {
                    elmJson = t.translator.toJson();
                } catch (Exception e) {
                    ObjectNode err = t.errors.addObject();
                    err.put("severity", "error");
                    err.putNull("line");
                    err.putNull("column");
                    err.put("message", "could not serialise ELM: " + e.getMessage());
                    t.errorCount++;
                }
            }
            if (elmJson != null) {
                Files.writeString(elmPath, elmJson, StandardCharsets.UTF_8);
                entry.put("elm", elmPath.toString());
            } else {
                Files.deleteIfExists(elmPath); // never leave ELM from an older, valid source
                entry.putNull("elm");
            }
            entry.set("errors", t.errors);
            entry.put("error_count", t.errorCount);
        }
        write(out, root);
        return 0;
    }

    static Path elmPathFor(Path cql) {
        String name = cql.getFileName().toString();
        String base = name.endsWith(".cql") ? name.substring(0, name.length() - 4) : name;
        return cql.resolveSibling(base + ".json");
    }

    // ---------------------------------------------------------------- evaluate

    /** Patient id -> resource type -> resources, from the bundles of PATIENTS.json. */
    static final class PatientData {
        final Map<String, Map<String, List<Resource>>> byPatient = new LinkedHashMap<>();
        final Map<String, Set<String>> patientRefs = new HashMap<>(); // references naming the patient
        final Map<String, String> bundleErrors = new LinkedHashMap<>();
    }

    static PatientData loadPatients(Path file, FhirContext ctx) throws IOException {
        JsonNode array = MAPPER.readTree(file.toFile());
        if (array == null || !array.isArray()) {
            throw new IOException(file + " must hold a JSON array of FHIR Bundles");
        }
        IParser parser = ctx.newJsonParser();
        PatientData data = new PatientData();
        int index = 0;
        for (JsonNode node : array) {
            String where = "bundle[" + index++ + "]";
            Bundle bundle;
            try {
                bundle = parser.parseResource(Bundle.class, MAPPER.writeValueAsString(node));
            } catch (Exception e) {
                data.bundleErrors.put(where, "not a FHIR R4 Bundle: " + e.getMessage());
                continue;
            }
            String pid = null;
            Set<String> refs = new LinkedHashSet<>();
            for (Bundle.BundleEntryComponent e : bundle.getEntry()) {
                Resource r = e.getResource();
                if (r != null && r.fhirType().equals("Patient") && r.getIdElement().getIdPart() != null) {
                    pid = r.getIdElement().getIdPart();
                    if (e.getFullUrl() != null) {
                        refs.add(e.getFullUrl());
                    }
                    break;
                }
            }
            if (pid == null) {
                data.bundleErrors.put(where, "bundle has no Patient with an id");
                continue;
            }
            refs.add("Patient/" + pid);
            data.patientRefs.computeIfAbsent(pid, k -> new LinkedHashSet<>()).addAll(refs);
            Map<String, List<Resource>> byType = data.byPatient.computeIfAbsent(pid, k -> new HashMap<>());
            for (Bundle.BundleEntryComponent e : bundle.getEntry()) {
                Resource r = e.getResource();
                if (r != null) {
                    byType.computeIfAbsent(r.fhirType(), k -> new ArrayList<>()).add(r);
                }
            }
        }
        return data;
    }

    /** In-memory retrieve over {@link PatientData}. */
    static final class MemoryRetrieveProvider implements RetrieveProvider {
        private final PatientData data;
        private final R4FhirModelResolver model;

        MemoryRetrieveProvider(PatientData data, R4FhirModelResolver model) {
            this.data = data;
            this.model = model;
        }

        @Override
        public Iterable<Object> retrieve(String context, String contextPath, Object contextValue, String dataType,
                String templateId, String codePath, Iterable<Code> codes, String valueSet, String datePath,
                String dateLowPath, String dateHighPath, Interval dateRange) {
            if (valueSet != null) {
                throw new UnsupportedOperationException("retrieve of " + dataType + " filtered by value set "
                        + valueSet + ": value sets need a terminology service, which this tool does not have;"
                        + " use codes instead");
            }
            if (dateRange != null) {
                throw new UnsupportedOperationException("date-range filtered retrieve is not supported");
            }
            List<String> pids;
            if ("Patient".equals(context) && contextValue != null) {
                pids = List.of(stripPrefix(String.valueOf(contextValue)));
            } else {
                pids = new ArrayList<>(data.byPatient.keySet()); // Unfiltered context: everyone
            }
            List<Object> found = new ArrayList<>();
            for (String pid : pids) {
                Map<String, List<Resource>> byType = data.byPatient.get(pid);
                if (byType == null) {
                    continue;
                }
                for (Resource r : byType.getOrDefault(dataType, Collections.emptyList())) {
                    if ("Patient".equals(context) && contextValue != null && !belongs(r, contextPath, pid)) {
                        continue;
                    }
                    if (codes != null && !matchesCodes(r, codePath == null ? "code" : codePath, codes)) {
                        continue;
                    }
                    found.add(r);
                }
            }
            return found;
        }

        private static String stripPrefix(String v) {
            return v.startsWith("Patient/") ? v.substring("Patient/".length()) : v;
        }

        private boolean belongs(Resource r, String contextPath, String pid) {
            if (r.fhirType().equals("Patient")) {
                return pid.equals(r.getIdElement().getIdPart());
            }
            if (contextPath == null) {
                return true;
            }
            Object v;
            try {
                v = model.resolvePath(r, contextPath);
            } catch (RuntimeException e) {
                return true; // no such path on this type: keep what the patient's bundle holds
            }
            if (v instanceof Reference ref) {
                String s = ref.getReference();
                if (s == null || s.isEmpty()) {
                    return true;
                }
                Set<String> refs = data.patientRefs.getOrDefault(pid, Set.of());
                return refs.contains(s) || s.endsWith("/Patient/" + pid);
            }
            if (v instanceof IPrimitiveType<?> p) {
                return pid.equals(stripPrefix(String.valueOf(p.getValueAsString())));
            }
            if (v instanceof String s) {
                return pid.equals(stripPrefix(s));
            }
            return true;
        }

        private boolean matchesCodes(Resource r, String codePath, Iterable<Code> codes) {
            Object v;
            try {
                v = model.resolvePath(r, codePath);
            } catch (RuntimeException e) {
                return false;
            }
            List<Coding> codings = new ArrayList<>();
            collectCodings(v, codings);
            for (Code want : codes) {
                for (Coding c : codings) {
                    boolean codeOk = want.getCode() != null && want.getCode().equals(c.getCode());
                    boolean systemOk = want.getSystem() == null || want.getSystem().equals(c.getSystem());
                    if (codeOk && systemOk) {
                        return true;
                    }
                }
            }
            return false;
        }

        private static void collectCodings(Object v, List<Coding> into) {
            if (v instanceof CodeableConcept cc) {
                into.addAll(cc.getCoding());
            } else if (v instanceof Coding c) {
                into.add(c);
            } else if (v instanceof Iterable<?> it) {
                for (Object o : it) {
                    collectCodings(o, into);
                }
            }
        }
    }

    static ZonedDateTime parseWhen(String s) {
        try {
            return ZonedDateTime.parse(s);
        } catch (DateTimeParseException e) {
            return LocalDate.parse(s).atStartOfDay(ZoneOffset.UTC);
        }
    }

    static int evaluate(Path out, Path libFile, Path patientsFile, String when, List<String> defines)
            throws IOException {
        ZonedDateTime evalTime;
        try {
            evalTime = parseWhen(when);
        } catch (DateTimeParseException e) {
            System.err.println("CqlTool: EVAL_DATETIME must be ISO 8601 (e.g. 2026-01-01T00:00:00Z): " + when);
            return 2;
        }
        Path dir = libFile.toAbsolutePath().getParent();
        LibraryManager manager = libraryManager(dir);
        Translation t = compile(libFile, manager);
        ObjectNode root = NODES.objectNode();
        root.put("engine", VERSION);
        root.put("evaluation_datetime", evalTime.toString());
        if (t.errorCount > 0 || t.translator == null) {
            root.set("errors", t.errors);
            root.put("error_count", t.errorCount);
            root.putObject("results");
            write(out, root);
            System.err.println("CqlTool: " + libFile + " has " + t.errorCount + " translation error(s)");
            return 1;
        }
        Library elm = t.translator.toELM();
        VersionedIdentifier id = new VersionedIdentifier().withId(elm.getIdentifier().getId())
                .withVersion(elm.getIdentifier().getVersion());
        Set<String> names = new LinkedHashSet<>();
        if (defines.isEmpty()) {
            if (elm.getStatements() != null) {
                for (ExpressionDef def : elm.getStatements().getDef()) {
                    if (!(def instanceof FunctionDef)) {
                        names.add(def.getName());
                    }
                }
            }
        } else {
            names.addAll(defines);
        }

        FhirContext ctx = FhirContext.forR4Cached();
        PatientData data = loadPatients(patientsFile, ctx);
        R4FhirModelResolver model = new R4FhirModelResolver();
        DataProvider provider = new CompositeDataProvider(model, new MemoryRetrieveProvider(data, model));
        Map<String, DataProvider> providers = new HashMap<>();
        providers.put(FHIR_MODEL_URI, provider);
        Environment env = new Environment(manager, providers, null);

        ObjectNode results = root.putObject("results");
        for (Map.Entry<String, String> e : data.bundleErrors.entrySet()) {
            results.putObject(e.getKey()).put("__error__", e.getValue());
        }
        for (String pid : data.byPatient.keySet()) {
            ObjectNode values = NODES.objectNode();
            try {
                CqlEngine engine = new CqlEngine(env);
                EvaluationResult r = engine.evaluate(id, names, Pair.of("Patient", pid), null, null, evalTime);
                for (String name : names) {
                    ExpressionResult er = r.expressionResults.get(name);
                    values.set(name, toJson(er == null ? null : er.value()));
                }
            } catch (Exception ex) {
                values.removeAll();
                values.put("__error__", ex.getClass().getSimpleName() + ": " + ex.getMessage());
            }
            results.set(pid, values);
        }
        write(out, root);
        return 0;
    }

    static JsonNode toJson(Object v) {
        if (v == null) {
            return NODES.nullNode();
        }
        if (v instanceof Boolean b) {
            return NODES.booleanNode(b);
        }
        if (v instanceof Integer i) {
            return NODES.numberNode(i);
        }
        if (v instanceof Long l) {
            return NODES.numberNode(l);
        }
        if (v instanceof BigDecimal d) {
            return NODES.numberNode(d);
        }
        if (v instanceof Double d) {
            return NODES.numberNode(d);
        }
        if (v instanceof String s) {
            return NODES.textNode(s);
        }
        if (v instanceof IBaseResource r) {
            String pid = r.getIdElement() == null ? null : r.getIdElement().getIdPart();
            return NODES.textNode(r.fhirType() + "/" + (pid == null ? "" : pid));
        }
        if (v instanceof IPrimitiveType<?> p) {
            Object pv = p.getValue();
            if (pv instanceof Boolean || pv instanceof Integer || pv instanceof Long || pv instanceof BigDecimal
                    || pv instanceof String) {
                return toJson(pv);
            }
            return p.getValueAsString() == null ? NODES.nullNode() : NODES.textNode(p.getValueAsString());
        }
        if (v instanceof org.hl7.fhir.instance.model.api.IBase b) {
            try { // a FHIR datatype (Quantity, CodeableConcept, ...): its FHIR JSON, as a string
                return NODES.textNode(FhirContext.forR4Cached().newJsonParser().encodeToString(b));
            } catch (RuntimeException e) {
                return NODES.textNode(String.valueOf(v));
            }
        }
        if (v instanceof Iterable<?> it) {
            ArrayNode a = NODES.arrayNode();
            for (Object o : it) {
                a.add(toJson(o));
            }
            return a;
        }
        return NODES.textNode(String.valueOf(v));
    }

    static void write(Path out, ObjectNode root) throws IOException {
        Path parent = out.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(out, MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root),
                StandardCharsets.UTF_8);
    }
}
