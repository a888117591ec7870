import StrictJSON

extension ServiceConfiguration {
    /// `console`: the web console for the people who run the store, under `/console/`. Signing in takes one of the
    /// service's `tokens`; a session lives in the service's memory for ``sessionMinutes``.
    /// ```json
    /// "console": {"enabled": true, "secure_cookie": false, "session_minutes": 480}
    /// ```
    public struct Console: Hashable, Sendable {
        /// The shortest and longest session allowed, in minutes.
        public static let sessionMinutesRange = 5...1440

        /// Whether the session cookie carries `Secure`: set it when the console is reached over TLS (behind a
        /// proxy that terminates it).
        public var secureCookie: Bool
        /// How long a session lasts from sign-in, in minutes (``sessionMinutesRange``).
        public var sessionMinutes: Int

        /// A console whose sessions last `sessionMinutes`, with a `Secure` cookie when `secureCookie`.
        public init(secureCookie: Bool = false, sessionMinutes: Int = 480) {
            self.secureCookie = secureCookie
            self.sessionMinutes = sessionMinutes
        }
    }

    /// `console`, when present with `"enabled": true`; nil (every `/console` path answers 404) otherwise.
    static func console(_ reader: JSONObjectReader) throws(JSONFieldError) -> Console? {
        guard let settings = try reader.object("console") else { return nil }
        try settings.rejectUnknownKeys(allowed: ["enabled", "secure_cookie", "session_minutes"])
        let secureCookie = try settings.bool("secure_cookie") ?? false
        let minutes = try settings.integer("session_minutes", in: Console.sessionMinutesRange) ?? 480
        guard try settings.bool("enabled") == true else { return nil }
        return Console(secureCookie: secureCookie, sessionMinutes: minutes)
    }
}
