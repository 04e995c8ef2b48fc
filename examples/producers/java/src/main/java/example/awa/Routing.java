// Client-side routing from docs/contract.md §4–§8: partition choice, and the expectations
// (route source, shard, concurrency digest) this producer sends for PostgreSQL to confirm.
package example.awa;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

final class Routing {
  static final int MAX_KEY = 4096; // §8: longer keys are refused (ZA003); a client router too
  private static final long OFFSET = 0xcbf29ce484222325L;
  private static final long PRIME = 0x100000001b3L;
  private static final long PARTITION_SALT = 0x9d4d1b2f53a70c91L;
  private static final byte[] TAG = "awa:concurrency_key:v1\0".getBytes(StandardCharsets.US_ASCII);

  private Routing() {}

  /** §4: multiply, then ADD the byte (unsigned); long arithmetic wraps mod 2^64. */
  static long hash64(byte[] key) {
    long h = OFFSET;
    for (byte b : key) h = h * PRIME + (b & 0xff);
    return h;
  }

  /** §5: the physical queue of a PartitionedQueue(logical, n) that the key routes to. */
  static String physicalQueue(String logical, byte[] key, int partitions) {
    if (partitions == 1) return logical;
    long v = hash64(key) ^ PARTITION_SALT;
    v ^= v >>> 30;
    v *= 0xbf58476d1ce4e5b9L;
    v ^= v >>> 27;
    v *= 0x94d049bb133111ebL;
    v ^= v >>> 31;
    long p = Long.remainderUnsigned(v, partitions);
    return p == 0 ? logical : logical + "__p" + p;
  }

  static byte[] concurrencyDigest(byte[] key) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(TAG);
      return sha.digest(key);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e); // every JDK has SHA-256
    }
  }

  /** §8 at width w: the opts keys insert_job checks (ZA001 on a mismatch); null = no key. */
  static Map<String, Object> expectations(int w, byte[] orderingKey, byte[] concurrencyKey) {
    byte[] digestKey = concurrencyKey;
    if (digestKey == null) {
      digestKey = orderingKey; // ADR-033 fallback: the ordering key is the concurrency input
    }
    byte[] digest = digestKey == null ? null : concurrencyDigest(digestKey);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("expected_concurrency_digest", digest == null ? null : HexFormat.of().formatHex(digest));
    if (orderingKey != null) {
      out.put("expected_route_source", "ordering_key");
      out.put("expected_enqueue_shard", Long.remainderUnsigned(hash64(orderingKey), w));
    } else if (concurrencyKey != null) {
      out.put("expected_route_source", "concurrency_key");
      out.put("expected_enqueue_shard", Long.remainderUnsigned(ByteBuffer.wrap(digest).getLong(), w));
    } else {
      out.put("expected_route_source", "rotor"); // the rotor's shard is PostgreSQL's choice
    }
    return out;
  }
}
