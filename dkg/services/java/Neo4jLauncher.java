import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Starts an embedded Neo4j Community engine with the Bolt connector on a loopback address.
 *
 * Arguments: HOME HOST PORT PAGECACHE_MIB PASSWORD_FILE TX_TIMEOUT_S TX_LOG_RETENTION
 * (TX_LOG_RETENTION is Neo4j's db.tx_log.rotation.retention_policy, e.g. "512M size": without it the
 * transaction logs of every load are kept two days, which is most of the disk the server takes).
 * The password is read from a file (never from the command line, where `ps` would show it)
 * and set for the `neo4j` user on every start, so the file stays the single source of truth.
 * Prints "DKG-NEO4J-READY" once Bolt accepts connections; a shutdown hook closes the store
 * cleanly on SIGTERM so the next start needs no recovery.
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println(
                    "usage: Neo4jLauncher HOME HOST PORT PAGECACHE_MIB PASSWORD_FILE TX_TIMEOUT_S TX_LOG_RETENTION");
            System.exit(2);
        }
        Path home = Path.of(args[0]);
        String host = args[1];
        int port = Integer.parseInt(args[2]);
        long pageCacheBytes = Long.parseLong(args[3]) * 1024L * 1024L;
        String password = Files.readString(Path.of(args[4]), StandardCharsets.UTF_8).strip();
        long txTimeoutSeconds = Long.parseLong(args[5]);
        String txLogRetention = args[6];

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheBytes)
                .setConfig(GraphDatabaseSettings.transaction_timeout, java.time.Duration.ofSeconds(txTimeoutSeconds))
                .setConfig(GraphDatabaseSettings.keep_logical_logs, txLogRetention)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "dkg-neo4j-shutdown"));

        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // On a restart the stored password already equals the file's: nothing to change.
            String msg = String.valueOf(e.getMessage());
            if (!msg.contains("cannot be the same")) {
                System.err.println("DKG-NEO4J-FAILED could not set the password: " + msg);
                System.exit(1);  // runs the shutdown hook, so the store closes cleanly
            }
        }
        System.out.println("DKG-NEO4J-READY " + host + ":" + port);
        System.out.flush();
        Thread.currentThread().join();
    }
}
