import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import Synchronization

/// One signed-in console session: when it ends and the token its requests that change something must carry.
struct ConsoleSession: Sendable {
    /// The cookie's value: 43 characters of base64url of 32 random bytes.
    let id: String
    /// The `X-CSRF-Token` its POSTs must carry: another 32 random bytes, in base64url.
    let csrfToken: String
    /// When it stops being a session.
    let expires: ReceiptDate
}

/// The console's sessions, in memory only: at most ``capacity`` of them, keyed by the SHA-256 of their ids (so a
/// lookup's timing says nothing about the ids held). Expired sessions are dropped when they are looked up and
/// whenever the store is full; a full store of live sessions drops the one that ends first.
final class ConsoleSessions: Sendable {
    /// Most sessions held at once.
    static let capacity = 10_000
    /// Random bytes in a session id and in a CSRF token.
    static let randomBytes = 32

    private let sessions = Mutex([[UInt8]: ConsoleSession]())

    /// A new session lasting `minutes` from `now`, its id and CSRF token from OpenSSL's secure generator.
    func create(now: ReceiptDate, minutes: Int) throws(CryptoError) -> ConsoleSession {
        let session = ConsoleSession(
            id: Base64URL.encode(try secureRandomBytes(Self.randomBytes)),
            csrfToken: Base64URL.encode(try secureRandomBytes(Self.randomBytes)),
            expires: ReceiptDate(millisecondsSince1970: now.millisecondsSince1970 + Int64(minutes) * 60_000))
        sessions.withLock { sessions in
            if sessions.count >= Self.capacity {
                sessions = sessions.filter { $0.value.expires > now }
            }
            if sessions.count >= Self.capacity, let first = sessions.min(by: { $0.value.expires < $1.value.expires }) {
                sessions[first.key] = nil
            }
            sessions[Self.key(session.id)] = session
        }
        return session
    }

    /// The live session whose id is `id`, or nil when there is none (an expired one is dropped).
    func session(_ id: String, now: ReceiptDate) -> ConsoleSession? {
        let key = Self.key(id)
        return sessions.withLock { sessions in
            guard let session = sessions[key] else { return nil }
            guard session.expires > now else {
                sessions[key] = nil
                return nil
            }
            return session
        }
    }

    /// Ends the session `id`, if there is one.
    func remove(_ id: String) {
        let key = Self.key(id)
        _ = sessions.withLock { $0.removeValue(forKey: key) }
    }

    /// How many sessions are held, expired ones not yet dropped included.
    var count: Int { sessions.withLock { $0.count } }

    private static func key(_ id: String) -> [UInt8] { DigestAlgorithm.sha256.hash(Array(id.utf8)[...]) }
}
