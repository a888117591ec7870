/// The local time in force at an instant: how far it is from UTC, whether it is daylight-saving time, and what it is
/// called (`PDT`, `GMT`, `+0530`).
public struct LocalTimeType: Sendable, Hashable {
    /// Seconds east of UTC: local time = UTC + `utcOffset` (Los Angeles in summer: -25 200).
    public let utcOffset: Int32
    /// True for daylight-saving time (which may be behind standard time, as Ireland's winter GMT is).
    public let isDaylightSaving: Bool
    /// The zone's abbreviation for this local time, as the database spells it.
    public let abbreviation: String

    public init(utcOffset: Int32, isDaylightSaving: Bool, abbreviation: String) {
        self.utcOffset = utcOffset
        self.isDaylightSaving = isDaylightSaving
        self.abbreviation = abbreviation
    }
}
