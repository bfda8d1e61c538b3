import CourierTestServer
import Testing

/// The suites that run the `openssl` tool and hash passwords block their thread while they work
/// (child processes, blocking sockets, PBKDF2). They are nested here and run one test at a time,
/// so that they never hold both of Swift's cooperative threads on a 2-core machine and stall the
/// rest of the suite, which runs in parallel.
@Suite(.serialized, .ownThread)
struct SerialTLSTests {}
