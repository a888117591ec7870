/// Where a ledger is kept, as the configuration's `"ledger"` and `receipt ledger` name it: a PostgreSQL
/// connection URI (`postgresql://…` or `postgres://…`), or else the path of a SQLite file.
public enum LedgerLocation: Hashable, Sendable, CustomStringConvertible {
    case sqlite(path: String)
    case postgreSQL(uri: String)

    /// The location `text` names: a PostgreSQL URI when it starts with `postgresql://` or `postgres://`, a SQLite
    /// path otherwise.
    public init(_ text: String) {
        if text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") {
            self = .postgreSQL(uri: text)
        } else {
            self = .sqlite(path: text)
        }
    }

    /// Whether `text` names a PostgreSQL database rather than a SQLite file.
    public static func isPostgreSQL(_ text: String) -> Bool {
        if case .postgreSQL = LedgerLocation(text) { true } else { false }
    }

    /// Opens the ledger there; a PostgreSQL ledger with at most `connections` connections.
    public func open(connections: Int) throws(LedgerError) -> any LedgerStore {
        switch self {
        case .sqlite(let path): try SQLiteLedger(path: path)
        case .postgreSQL(let uri): try PostgreSQLLedger(uri: uri, connections: connections)
        }
    }

    /// The path, or the URI without its password (`postgresql://user:…@host/db` becomes `postgresql://user@host/db`).
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgreSQL(let uri):
            // The user information is the part of the authority (up to the first "/" or "?") before its "@"; a
            // password follows its first ":".
            let afterScheme = uri.index(uri.firstIndex(of: "/") ?? uri.startIndex, offsetBy: 2, limitedBy: uri.endIndex)
            guard let afterScheme else { return uri }
            let authority = uri[afterScheme...].prefix { $0 != "/" && $0 != "?" }
            guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
                return uri
            }
            return String(uri[..<colon]) + String(uri[at...])
        }
    }
}
