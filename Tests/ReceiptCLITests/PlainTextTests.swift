import Foundation
import Testing

@testable import receipt

/// The plain-text figures and cells of `receipt bench`, `receipt entitlements`, `receipt inspect` and `receipt
/// ledger`, written without Foundation as Foundation wrote them.
@Suite("Plain text: cells, figures and hex")
struct PlainTextTests {
    @Test("a cell is padded with spaces to its width, or cut to it")
    func cells() {
        #expect(PlainText.cell("raw EVP_DigestSign", width: 20) == "raw EVP_DigestSign  ")
        #expect(PlainText.cell("0.95× raw", width: 9) == "0.95× raw")
        #expect(PlainText.cell("123,456/s  0.95× raw  1.20× usual", width: 12) == "123,456/s  0")
        #expect(PlainText.cell("", width: 3) == "   ")
        // Widths count characters, as the entitlements table measures its columns (NSString counted UTF-16 units
        // and cut such a cell short).
        #expect(PlainText.cell("🎮 pro", width: 5) == "🎮 pro")
        #expect(PlainText.cell("🎮 pro", width: 7) == "🎮 pro  ")
    }

    @Test("trimming drops spaces and tabs at both ends, as Foundation's whitespaces did, and keeps line breaks")
    func trimming() {
        for text in [
            "  premium  active  2026-01-01T00:00:00Z  com.example.pro    ", "\t Intel(R) Xeon(R) CPU @ 2.20GHz \t",
            "\u{00A0}no-break\u{3000}", "", "   ", "inner  spaces kept", "\nline\n",
        ] {
            #expect(PlainText.trimmingSpaces(text) == text.trimmingCharacters(in: .whitespaces), "\(text)")
        }
    }

    @Test("the bench's figures: two or three places, whole megabytes per second, ratios")
    func benchFigures() {
        #expect(PlainText.decimal(0.8349, places: 2) == "0.83")
        #expect(PlainText.decimal(0.835, places: 2) == "0.84")
        #expect(PlainText.decimal(0.005, places: 2) == "0.01")
        #expect(PlainText.decimal(12.3456, places: 3) == "12.346")
        #expect(PlainText.decimal(182.49, places: 0) == "182")
        #expect(PlainText.decimal(1.0, places: 2) == "1.00")
    }

    @Test("rates are whole numbers grouped by thousands, as NumberFormatter's decimal style wrote them")
    func grouped() {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        for value in [0, 7.4, 999.6, 1000, 12_345.67, 123_456.2, 1_234_567.8, 98_765_432.1, -4321.2] {
            #expect(PlainText.grouped(value) == formatter.string(from: NSNumber(value: value)), "\(value)")
        }
    }
}
