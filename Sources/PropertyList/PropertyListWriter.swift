extension PropertyListValue {
    /// The value as compact old-style property-list text that ``init(parsing:maximumSize:maximumDepth:)`` reads back
    /// as an equal value: every string quoted, `"` and `\` escaped, control characters written as escapes, all other
    /// characters as UTF-8. For example `{"a"="b";"c"=("d","e");}`.
    ///
    /// Written without recursion, so values of any depth can be written (reading them back is bounded by the
    /// reader's depth limit).
    public var openStepText: [UInt8] {
        enum Step {
            case value(PropertyListValue)
            case literal(UInt8)
        }
        var output: [UInt8] = []
        var steps: [Step] = [.value(self)]
        while let step = steps.popLast() {
            switch step {
            case .literal(let byte):
                output.append(byte)
            case .value(.string(let text)):
                Self.appendQuoted(text, to: &output)
            case .value(.array(let elements)):
                output.append(UInt8(ascii: "("))
                steps.append(.literal(UInt8(ascii: ")")))
                for (position, element) in elements.enumerated().reversed() {
                    steps.append(.value(element))
                    if position > 0 { steps.append(.literal(UInt8(ascii: ","))) }
                }
            case .value(.dictionary(let dictionary)):
                output.append(UInt8(ascii: "{"))
                steps.append(.literal(UInt8(ascii: "}")))
                for entry in dictionary.entries.reversed() {
                    steps.append(.literal(UInt8(ascii: ";")))
                    steps.append(.value(entry.value))
                    steps.append(.literal(UInt8(ascii: "=")))
                    steps.append(.value(.string(entry.key)))
                }
            }
        }
        return output
    }

    private static func appendQuoted(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                output.append(UInt8(ascii: "\\"))
                output.append(byte)
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x00..<0x20, 0x7F:
                // Always three octal digits, so that a digit after the escape is not read as part of it.
                output.append(UInt8(ascii: "\\"))
                output.append(UInt8(ascii: "0") + (byte >> 6))
                output.append(UInt8(ascii: "0") + ((byte >> 3) & 0x07))
                output.append(UInt8(ascii: "0") + (byte & 0x07))
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
