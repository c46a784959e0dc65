import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import ca.uhn.fhir.context.FhirContext;
import ca.uhn.fhir.context.support.DefaultProfileValidationSupport;
import ca.uhn.fhir.util.VersionUtil;
import ca.uhn.fhir.validation.FhirValidator;
import ca.uhn.fhir.validation.ResultSeverityEnum;
import ca.uhn.fhir.validation.SingleValidationMessage;
import ca.uhn.fhir.validation.ValidationResult;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.hl7.fhir.common.hapi.validation.support.CommonCodeSystemsTerminologyService;
import org.hl7.fhir.common.hapi.validation.support.InMemoryTerminologyServerValidationSupport;
import org.hl7.fhir.common.hapi.validation.support.SnapshotGeneratingValidationSupport;
import org.hl7.fhir.common.hapi.validation.support.ValidationSupportChain;
import org.hl7.fhir.common.hapi.validation.validator.FhirInstanceValidator;

/**
 * Validates FHIR R4 JSON resources offline with the HAPI instance validator.
 *
 * Usage: FhirValidate OUT.json FILE.json [FILE.json ...]
 *
 * Each FILE holds one resource (often a collection Bundle). The whole file is validated and,
 * for a Bundle, every entry's resource again on its own. Validation support: the core R4
 * profiles, the common code systems (UCUM, MIME types, languages, ...), an in-memory terminology
 * service over the loaded value sets and snapshot generation; no remote terminology server, so
 * codes from external code systems such as LOINC or SNOMED CT are not checked, and profiles
 * not in the core package (e.g. HL7 CPG) are unknown. HAPI's messages are reported as given.
 *
 * OUT.json: {"validator": VERSION, "files": [{"file", "resource", "issues": [{"severity",
 * "location", "message", "message_id"}], "errors"}]}; "errors" counts error and fatal issues.
 * A file that cannot be read or parsed gets one fatal issue. Exit 0 when it ran, 2 on usage.
 *
 * System property dkg.fhir.errorForUnknownProfiles=true|false overrides HAPI's
 * FhirInstanceValidator#setErrorForUnknownProfiles (default: HAPI's own default).
 */
public final class FhirValidate {
    private FhirValidate() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: FhirValidate OUT.json FILE.json [FILE.json ...]");
            System.exit(2);
        }
        // Nothing but this tool's own output may reach stdout: route stray library prints to stderr.
        PrintStream stdout = System.out;
        System.setOut(System.err);

        FhirContext ctx = FhirContext.forR4();
        ValidationSupportChain chain = new ValidationSupportChain(
                new DefaultProfileValidationSupport(ctx),
                new CommonCodeSystemsTerminologyService(ctx),
                new InMemoryTerminologyServerValidationSupport(ctx),
                new SnapshotGeneratingValidationSupport(ctx));
        FhirInstanceValidator module = new FhirInstanceValidator(chain);
        String unknownProfiles = System.getProperty("dkg.fhir.errorForUnknownProfiles");
        if (unknownProfiles != null && !unknownProfiles.isBlank()) {
            module.setErrorForUnknownProfiles(Boolean.parseBoolean(unknownProfiles.strip()));
        }
        FhirValidator validator = ctx.newValidator();
        validator.registerValidatorModule(module);
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode out = mapper.createObjectNode();
        out.put("validator", "HAPI FHIR " + VersionUtil.getVersion());
        ArrayNode files = out.putArray("files");

        for (int i = 1; i < args.length; i++) {
            String file = args[i];
            String text;
            JsonNode root;
            try {
                text = Files.readString(Path.of(file), StandardCharsets.UTF_8);
                root = mapper.readTree(text);
                if (root == null || !root.isObject()) {
                    throw new IllegalArgumentException("the file does not hold a JSON object");
                }
            } catch (Exception e) {
                ObjectNode entry = files.addObject();
                entry.put("file", file);
                entry.putNull("resource");
                ArrayNode issues = entry.putArray("issues");
                ObjectNode issue = issues.addObject();
                issue.put("severity", "fatal");
                issue.put("location", file);
                issue.put("message", "could not read or parse the file as JSON: "
                        + e.getClass().getSimpleName() + ": " + e.getMessage());
                issue.putNull("message_id");
                entry.put("errors", 1);
                continue;
            }
            // Raw JSON text goes to the validator (never a parsed-and-re-encoded model), so what
            // HAPI's lenient parser would drop or repair is still reported.
            addResult(files, file, label(root, null), safeValidate(validator, text, file));
            if ("Bundle".equals(root.path("resourceType").asText()) && root.path("entry").isArray()) {
                int j = 0;
                for (JsonNode e : root.path("entry")) {
                    JsonNode r = e.get("resource");
                    if (r != null && r.isObject()) {
                        addResult(files, file, label(r, j), safeValidate(validator, mapper.writeValueAsString(r), file));
                    }
                    j++;
                }
            }
        }
        Path outPath = Path.of(args[0]);
        Path parent = outPath.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(outPath, mapper.writerWithDefaultPrettyPrinter().writeValueAsString(out),
                StandardCharsets.UTF_8);
        stdout.flush();
        System.exit(0);
    }

    private static String label(JsonNode r, Integer entryIndex) {
        String type = r.path("resourceType").asText("");
        if (type.isEmpty()) {
            type = "(no resourceType)";
        }
        String id = r.path("id").asText("");
        if (id.isEmpty()) {
            return entryIndex == null ? type + "/" : type + "/(entry " + entryIndex + ", no id)";
        }
        return type + "/" + id;
    }

    private static List<SingleValidationMessage> safeValidate(FhirValidator validator, String text, String file) {
        try {
            ValidationResult result = validator.validateWithResult(text);
            return result.getMessages();
        } catch (Exception e) {
            SingleValidationMessage m = new SingleValidationMessage();
            m.setSeverity(ResultSeverityEnum.FATAL);
            m.setLocationString(file);
            m.setMessage("validator failed: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            List<SingleValidationMessage> list = new ArrayList<>();
            list.add(m);
            return list;
        }
    }

    private static void addResult(ArrayNode files, String file, String resource, List<SingleValidationMessage> msgs) {
        ObjectNode entry = files.addObject();
        entry.put("file", file);
        entry.put("resource", resource);
        ArrayNode issues = entry.putArray("issues");
        int errors = 0;
        for (SingleValidationMessage m : msgs) {
            ResultSeverityEnum sev = m.getSeverity();
            String code = sev == null ? "information" : sev.getCode();
            if (sev == ResultSeverityEnum.ERROR || sev == ResultSeverityEnum.FATAL) {
                errors++;
            }
            ObjectNode issue = issues.addObject();
            issue.put("severity", code);
            issue.put("location", m.getLocationString());
            issue.put("message", m.getMessage());
            issue.put("message_id", m.getMessageId());
        }
        entry.put("errors", errors);
    }
}
