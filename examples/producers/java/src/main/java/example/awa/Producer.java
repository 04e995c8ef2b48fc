// Example Awa producer in Java (pgjdbc) for the runner's producer protocol (docs/adapter-protocol.md).
//
// Reads one enqueue request per line on stdin, enqueues it through <schema>.insert_job and
// answers on stdout. The hello declares max_in_flight: a fixed pool of worker threads, each with
// its own connection, enqueues up to that many requests at once and answers each with its seq
// once it has committed, in whatever order they finish. Canonical JSON, the BLAKE3 unique_key,
// partition choice and routing expectations are computed here from docs/contract.md; the kit is
// never called.
// Env: AWA_CONFORMANCE_DSN (postgres:// URL).
package example.awa;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

public final class Producer {
  private static final String NAME = "awa-example-java";
  private static final String VERSION = "0.1.0";
  // Protocol 3: a job also carries metadata and max_attempts, and run_at may have any offset.
  private static final int PROTOCOL = 3;
  // Requests answered at once (hello.max_in_flight): the engine may send this many before it
  // reads an answer, and as many workers, each with its own connection, take them, so none of
  // them waits for another's statement (a JDBC connection runs one statement at a time).
  private static final int IN_FLIGHT = 8;
  private static final ObjectMapper JSON = new ObjectMapper();
  // Handed to each worker once no more requests will come: it ends after the requests it took.
  private static final JsonNode END = JSON.createObjectNode();

  private final Connection conn;

  private Producer(Connection conn) {
    this.conn = conn;
  }

  public static void main(String[] argv) throws Exception {
    String dsn = System.getenv("AWA_CONFORMANCE_DSN");
    if (dsn == null || dsn.isEmpty()) {
      System.err.println(NAME + ": AWA_CONFORMANCE_DSN is not set (the runner sets it)");
      System.exit(2);
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    List<Connection> conns = new ArrayList<>();
    try {
      // Every connection is opened before the hello: an unreachable database fails the start,
      // not a request.
      for (int i = 0; i < IN_FLIGHT; i++) {
        Connection conn = connect(dsn);
        conns.add(conn);
        conn.setAutoCommit(true); // one statement per job: committed before the answer
      }
      ObjectNode hello = JSON.createObjectNode().put("type", "hello").put("protocol", PROTOCOL);
      hello.putObject("implementation").put("name", NAME).put("version", VERSION);
      hello.putArray("capabilities").add("enqueue").add("errors");
      hello.put("max_in_flight", IN_FLIGHT); // absent, the engine sends one request at a time
      send(out, hello);
      serve(conns, out);
    } finally {
      for (Connection conn : conns) conn.close();
    }
  }

  /**
   * Hands each request line on stdin to the workers until stop or the end of stdin, then lets
   * every worker answer the requests it took and waits for them.
   */
  private static void serve(List<Connection> conns, PrintStream out) throws Exception {
    // Unbounded, so that handing over END never blocks; it holds few requests all the same: the
    // engine sends at most IN_FLIGHT before it reads an answer, and a worker answers only after
    // its request has committed.
    BlockingQueue<JsonNode> requests = new LinkedBlockingQueue<>();
    List<Thread> workers = new ArrayList<>();
    for (Connection conn : conns) {
      Producer p = new Producer(conn);
      Thread worker = new Thread(() -> p.work(requests, out), NAME + "-worker-" + workers.size());
      worker.start();
      workers.add(worker);
    }
    try {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) {
        if (line.isBlank()) continue;
        JsonNode req = JSON.readTree(line);
        if (req.path("type").asText().equals("stop")) break;
        requests.put(req);
      }
    } finally {
      // No more requests (stop, the end of stdin or a line that is not JSON): every request
      // already taken is still answered before the connections close.
      for (int i = 0; i < workers.size(); i++) requests.put(END);
      for (Thread worker : workers) worker.join();
    }
  }

  /** One worker: takes requests one at a time and answers each on this producer's connection. */
  private void work(BlockingQueue<JsonNode> requests, PrintStream out) {
    try {
      for (JsonNode req; (req = requests.take()) != END; ) {
        send(out, answer(req));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // nothing interrupts a worker; if it were, it ends
    }
  }

  /** The answer to one request other than stop; every outcome is an answer, nothing throws. */
  private ObjectNode answer(JsonNode req) {
    String type = req.path("type").asText();
    ObjectNode answer = JSON.createObjectNode().put("seq", req.path("seq").asLong());
    if (!type.equals("enqueue")) {
      answer.put("error", "unknown request type " + type);
    } else {
      enqueue(req, answer);
    }
    return answer;
  }

  /**
   * Writes one message as one line. Workers answer at once, so the line is written and flushed
   * under the stream's lock: two answers never interleave, and the engine, which may be waiting
   * for this very line, gets it at once (the stream flushes on println).
   */
  private static void send(PrintStream out, JsonNode message) {
    String line;
    try {
      line = JSON.writeValueAsString(message);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e); // a tree of strings and numbers always serialises
    }
    synchronized (out) {
      out.println(line);
    }
  }

  /** pgjdbc takes jdbc:postgresql:// URLs; the runner hands out postgres:// ones. */
  static Connection connect(String dsn) throws SQLException {
    URI uri = URI.create(dsn);
    Properties props = new Properties();
    props.setProperty("ApplicationName", NAME);
    if (uri.getRawUserInfo() != null) {
      String[] user = uri.getRawUserInfo().split(":", 2);
      props.setProperty("user", URLDecoder.decode(user[0], StandardCharsets.UTF_8));
      if (user.length > 1) props.setProperty("password", URLDecoder.decode(user[1], StandardCharsets.UTF_8));
    }
    String host = uri.getHost() == null ? "localhost" : uri.getHost();
    String port = uri.getPort() < 0 ? "" : ":" + uri.getPort();
    String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
    return DriverManager.getConnection("jdbc:postgresql://" + host + port + uri.getRawPath() + query, props);
  }

  private byte[] key(JsonNode hex) {
    if (hex == null || hex.isNull()) return null;
    return HexFormat.of().parseHex(hex.asText()); // "" is the empty key, not NULL
  }

  private static void bindKey(PreparedStatement ps, int i, byte[] k) throws SQLException {
    if (k == null) {
      ps.setNull(i, Types.BINARY);
    } else {
      ps.setBytes(i, k);
    }
  }

  private static String quoteIdent(String s) {
    return "\"" + s.replace("\"", "\"\"") + "\"";
  }

  private void enqueue(JsonNode req, ObjectNode answer) {
    JsonNode job = req.get("job");
    String schema = quoteIdent(req.get("schema").asText());
    try {
      byte[] args = CanonicalJson.encode(Typed.decode(job.get("args")));
      String argsText = new String(args, StandardCharsets.UTF_8);
      // Metadata is typed like args and written the same way (canonical JSON text), so the
      // stored jsonb holds exactly the numbers and strings asked; null keeps the default {}.
      JsonNode metadata = job.get("metadata");
      String metadataText = (metadata == null || metadata.isNull()) ? null
          : new String(CanonicalJson.encode(Typed.decode(metadata)), StandardCharsets.UTF_8);
      JsonNode partition = job.get("partition");
      boolean partitioned = partition != null && !partition.isNull();
      JsonNode orderingHex = job.get("ordering_key_hex");
      if ((orderingHex == null || orderingHex.isNull()) && partitioned) {
        orderingHex = partition.get("key_hex"); // the ordering key of the physical queue (§5)
      }
      byte[] orderingKey = key(orderingHex);
      byte[] concurrencyKey = key(job.get("concurrency_key_hex"));
      if (orderingKey != null && orderingKey.length > Routing.MAX_KEY) {
        throw new CanonicalJson.Refusal("key_too_long", "ordering_key is " + orderingKey.length + " bytes");
      }
      if (concurrencyKey != null && concurrencyKey.length > Routing.MAX_KEY) {
        throw new CanonicalJson.Refusal("key_too_long", "concurrency_key is " + concurrencyKey.length + " bytes");
      }
      String queue = job.get("queue").asText();
      if (partitioned) {
        queue = Routing.physicalQueue(queue, HexFormat.of().parseHex(partition.get("key_hex").asText()),
            partition.get("partitions").asInt());
      }
      ObjectNode trace = JSON.createObjectNode().put("canonical_args", argsText).put("physical_queue", queue);

      byte[] uniqueKey = null;
      JsonNode unique = job.get("unique");
      if (unique != null && !unique.isNull()) {
        JsonNode bucket = unique.get("period_bucket");
        byte[] pre = CanonicalJson.uniquePreimage(job.get("kind").asText(),
            unique.get("by_queue").asBoolean() ? queue : null,
            unique.get("by_args").asBoolean() ? args : null,
            bucket == null || bucket.isNull() ? null : Long.parseLong(bucket.asText()));
        uniqueKey = CanonicalJson.uniqueKey(pre);
        trace.put("unique_key_hex", HexFormat.of().formatHex(uniqueKey));
        trace.put("unique_preimage_hex", HexFormat.of().formatHex(pre));
      }

      // Expectations: PostgreSQL computes the routing; telling it what this producer expects
      // makes it refuse (ZA001) a job this producer would have routed differently.
      ObjectNode opts = job.get("opts").deepCopy();
      boolean hasExpectation = false;
      for (var it = opts.fieldNames(); it.hasNext(); ) hasExpectation |= it.next().startsWith("expected_");
      if (!hasExpectation) {
        int width;
        try (PreparedStatement ps = conn.prepareStatement("SELECT " + schema + ".queue_enqueue_shards(?::text)")) {
          ps.setString(1, queue);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            width = rs.getInt(1);
          }
        }
        for (Map.Entry<String, Object> e : Routing.expectations(width, orderingKey, concurrencyKey).entrySet()) {
          opts.set(e.getKey(), JSON.valueToTree(e.getValue()));
        }
      }

      // With ? placeholders every cast stays in the SQL. Keys are bytea (setBytes); the states
      // are text cast to varbit, never bit(8), which pads '1111' before the function can refuse.
      // run_at stays the request's text: PostgreSQL parses the offset and the microseconds
      // itself (java.sql.Timestamp would go through the JVM's time zone).
      String sql = "SELECT job_id FROM " + schema + ".insert_job(?::text, ?::text, ?::jsonb, ?::smallint, "
          + "?::smallint, ?::timestamptz, ?::jsonb, ?::text[], ?::bytea, ?::varbit"
          + ", ?::bytea, ?::bytea, ?::jsonb)";
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, job.get("kind").asText());
        ps.setString(2, queue);
        ps.setString(3, argsText);
        JsonNode priority = job.get("priority");
        if (priority == null || priority.isNull()) ps.setNull(4, Types.SMALLINT);
        else ps.setShort(4, (short) priority.asInt());
        JsonNode maxAttempts = job.get("max_attempts");
        if (maxAttempts == null || maxAttempts.isNull()) ps.setNull(5, Types.SMALLINT);
        else ps.setShort(5, (short) maxAttempts.asInt());
        JsonNode runAt = job.get("run_at");
        if (runAt == null || runAt.isNull()) ps.setNull(6, Types.VARCHAR);
        else ps.setString(6, runAt.asText());
        if (metadataText == null) ps.setNull(7, Types.VARCHAR);
        else ps.setString(7, metadataText);
        List<String> tags = new ArrayList<>();
        for (JsonNode t : job.get("tags")) tags.add(t.asText());
        ps.setArray(8, conn.createArrayOf("text", tags.toArray()));
        if (uniqueKey == null) ps.setNull(9, Types.BINARY);
        else ps.setBytes(9, uniqueKey);
        JsonNode us = job.get("unique_states");
        if (us == null || us.isNull()) ps.setNull(10, Types.VARCHAR);
        else ps.setString(10, us.asText());
        bindKey(ps, 11, orderingKey);
        bindKey(ps, 12, concurrencyKey);
        ps.setString(13, JSON.writeValueAsString(opts));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          answer.put("job_id", rs.getLong(1));
        }
      }
      answer.set("trace", trace);
    } catch (CanonicalJson.Refusal r) {
      answer.putObject("refused").putNull("sqlstate").put("code", r.code).put("message", r.getMessage());
    } catch (PSQLException e) {
      ServerErrorMessage server = e.getServerErrorMessage();
      if (server == null) {
        answer.put("error", e.toString()); // no server error: the connection, not a refusal
        return;
      }
      // Branch on the SQLSTATE, never the message; contract errors carry a JSON DETAIL.
      ObjectNode refused = answer.putObject("refused").put("sqlstate", e.getSQLState());
      refused.putNull("code");
      String detail = server.getDetail();
      if (detail != null) {
        try {
          JsonNode d = JSON.readTree(detail);
          if (d != null && d.path("code").isTextual()) refused.put("code", d.get("code").asText());
        } catch (java.io.IOException notJson) {
          // released errors (23505, 23514, ...) have a plain-text DETAIL or none
        }
      }
      refused.put("message", server.getMessage());
    } catch (Exception e) {
      answer.put("error", e.toString());
    }
  }
}
