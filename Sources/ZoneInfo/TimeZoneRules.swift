/// One time zone's rules as the compiled time-zone database records them (a TZif file, RFC 8536): its local time
/// types, the instants at which they change, and a POSIX TZ string for the instants after the last change.
///
/// Answers for any instant: before the first transition the zone's first local time type applies (its local mean
/// time, in the database's files); between transitions the type the last one set; after the last, the footer's TZ
/// string (or, without one, the last type).
public struct TimeZoneRules: Sendable, Hashable {
    /// The zone's name as the caller gave it, e.g. `America/Los_Angeles`.
    public let name: String
    private let contents: TZifContents

    /// The largest file ``system(_:)`` and ``init(tzif:name:)`` read: real TZif files are under 4 KiB.
    public static let maximumFileSize = 1 << 20

    /// Reads `name` from the system's database: the directory in `$TZDIR` when that is set and not empty, else
    /// `/usr/share/zoneinfo`.
    ///
    /// Throws `invalidName` for a name that is empty, absolute, has an empty, `.` or `..` component or a character
    /// other than letters, digits, `/`, `_`, `-`, `+` and `.` (so a name never leaves the directory); `notFound`,
    /// `unreadable` or `tooLarge` when the file cannot be had; and what ``init(tzif:name:)`` throws for its content.
    public static func system(_ name: String) throws(ZoneInfoError) -> TimeZoneRules {
        try load(name, fromDirectory: SystemDatabase.directory)
    }

    /// Reads `name` from the database in `directory`, with the checks of ``system(_:)``.
    public static func load(_ name: String, fromDirectory directory: String) throws(ZoneInfoError) -> TimeZoneRules {
        try SystemDatabase.validate(name)
        let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        let bytes: [UInt8]
        do {
            bytes = try SystemDatabase.read(path, limit: maximumFileSize)
        } catch {
            throw error.within("time zone \(name) (\(path))")
        }
        do {
            return try TimeZoneRules(tzif: bytes, name: name)
        } catch {
            throw ZoneInfoError(error.code, error.message + " (\(path))")
        }
    }

    /// Reads a TZif file (versions 1 to 4) strictly: see ``ZoneInfoError/Code`` for what is refused. Leap-second
    /// zones (`right/`) are refused as `unsupported` rather than answered off by their leap seconds.
    public init(tzif bytes: [UInt8], name: String) throws(ZoneInfoError) {
        guard bytes.count <= Self.maximumFileSize else {
            throw ZoneInfoError(
                .tooLarge, "time zone \(name): \(bytes.count) bytes, more than \(Self.maximumFileSize)")
        }
        do {
            contents = try TZifContents(parsing: bytes)
        } catch {
            throw error.within("time zone \(name)")
        }
        self.name = name
    }

    /// The footer's TZ string, which governs the instants after the last transition; nil for version 1 files and
    /// files whose footer is empty.
    public var footer: POSIXTimeZone? { contents.footer }

    /// The local time in force at `secondsSince1970` (UTC, leap seconds not counted), for every Int64 instant.
    /// Takes O(log n) in the number of transitions.
    public func localTime(at secondsSince1970: Int64) -> LocalTimeType {
        let transitions = contents.transitions
        guard let last = transitions.last, secondsSince1970 <= last else {
            if let footer = contents.footer { return footer.localTime(at: secondsSince1970) }
            return contents.types[Int(contents.transitionTypes.last ?? 0)]
        }
        // The number of transitions at or before the instant: 0 means before the first one.
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = low + (high - low) / 2
            if transitions[middle] <= secondsSince1970 {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return contents.types[low == 0 ? 0 : Int(contents.transitionTypes[low - 1])]
    }
}
