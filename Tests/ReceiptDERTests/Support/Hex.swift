/// Bytes from hex text such as `"30 03 02 01 05"`; spaces and line breaks are ignored.
///
/// A malformed literal is a mistake in the test itself, so it stops the run instead of throwing.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") })
    precondition(digits.count % 2 == 0, "odd number of hex digits in \"\(text)\"")
    return stride(from: 0, to: digits.count, by: 2).map { index in
        guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
            preconditionFailure("not a hex byte in \"\(text)\" at digit \(index)")
        }
        return byte
    }
}
