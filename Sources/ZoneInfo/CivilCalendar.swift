/// The proleptic Gregorian calendar in days since 1970-01-01, in Int64 arithmetic that cannot overflow for any year a
/// TZ rule is evaluated in (callers first fold instants into one 400-year cycle).
enum CivilCalendar {
    static let secondsPerDay: Int64 = 86_400
    /// 400 Gregorian years are 146 097 days, a whole number of weeks: dates and weekdays repeat after them.
    static let secondsPer400Years: Int64 = 146_097 * secondsPerDay

    static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// Days in `month` (1-12) of `year`.
    static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to `year`-`month`-`day` (month 1-12, day 1-31), negative before 1970.
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Counted from 0000-03-01 so that February 29 ends each year of the cycle.
        let marchYear = month <= 2 ? year - 1 : year
        let era = floorDivide(marchYear, 400)
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year that day `days` (since 1970-01-01) falls in.
    static func year(ofDaysSince1970 days: Int64) -> Int64 {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        // March-based months 10 and 11 are January and February of the next civil year.
        return yearOfEra + era * 400 + (marchMonth >= 10 ? 1 : 0)
    }

    /// The weekday of day `days` since 1970-01-01: 0 is Sunday (1970-01-01 was a Thursday, 4).
    static func weekday(ofDaysSince1970 days: Int64) -> Int64 {
        floorModulo(days + 4, 7)
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    static func floorModulo(_ value: Int64, _ divisor: Int64) -> Int64 {
        let remainder = value % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
