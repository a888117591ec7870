extension Int64 {
    /// How many bytes ``appendDecimal(to:)`` writes: the decimal digits, after a `-` when negative.
    public var decimalCount: Int {
        var count = 1
        var threshold: UInt64 = 10
        // 10^18 is the largest power of ten below the magnitude of Int64.min, so the threshold never overflows.
        while count < 19 && magnitude >= threshold {
            count += 1
            threshold &*= 10
        }
        return self < 0 ? count + 1 : count
    }

    /// Appends the bytes of `String(self)`, ``decimalCount`` of them, for which `output` must have room, without
    /// making the string: the digits are written from the last one back, where they go.
    public func appendDecimal(to output: inout OutputSpan<UInt8>) {
        let count = decimalCount
        output.withUnsafeMutableBufferPointer { buffer, initialized in
            // Room is reserved by the caller, as for OutputSpan.append, which stops the same way when there is none:
            // writing past it would write outside the buffer.
            precondition(buffer.count - initialized >= count, "no room for the digits")
            var position = initialized + count
            var rest = magnitude
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            if self < 0 { buffer[initialized] = UInt8(ascii: "-") }
            initialized += count
        }
    }
}
