import Glibc
import Synchronization

/// A bounded map that many threads read at once and seldom write. Each thread looks first in one of 16 parts,
/// picked by its identity and each behind its own lock, so that lookups from different threads seldom wait for each
/// other; a key missing from a thread's part is looked up in the shared whole (and copied into the part), so a
/// value stored once is found by every thread. When the whole or a part holds `capacity` entries, it is emptied and
/// fills again from use. A value stored again for a key replaces it in the whole and in the storing thread's part;
/// a thread that had already read the old value may keep finding it, so this is only for values that are either the
/// same for a key (a decoded certificate) or checked before each use (a chain verdict and its window of validity).
final class ReadMostlyCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private final class Part: Sendable {
        let entries = Mutex<[Key: Value]>([:])
    }

    private let whole = Mutex<[Key: Value]>([:])
    /// There are 2^partBits parts.
    private static var partBits: Int { 4 }
    private let parts = (0..<(1 << partBits)).map { _ in Part() }
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The value stored for `key`, or nil.
    func value(for key: Key) -> Value? {
        let part = currentPart()
        if let value = part.entries.withLock({ $0[key] }) { return value }
        guard let value = whole.withLock({ $0[key] }) else { return nil }
        Self.store(value, for: key, in: part.entries, capacity: capacity)
        return value
    }

    /// Stores `value` for `key`, for every thread.
    func store(_ value: Value, for key: Key) {
        Self.store(value, for: key, in: whole, capacity: capacity)
        Self.store(value, for: key, in: currentPart().entries, capacity: capacity)
    }

    /// How many entries the whole holds.
    var count: Int { whole.withLock { $0.count } }

    /// Every entry of the whole, as it is now.
    var entries: [Key: Value] { whole.withLock { $0 } }

    /// The part of the calling thread: the top `partBits` bits of its identity multiplied by a large odd constant
    /// (a Fibonacci hash, which spreads identities that differ only in low or middle bits, as thread addresses do).
    private func currentPart() -> Part {
        parts[Int(truncatingIfNeeded: (UInt64(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> (64 - Self.partBits))]
    }

    private static func store(_ value: Value, for key: Key, in entries: borrowing Mutex<[Key: Value]>, capacity: Int) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
    }
}
