/// A member's key with its JSON text made once, for objects written often: ``JSONObjectWriter`` writes it as one
/// copy of bytes, where a `String` key is escaped and quoted again at each member (a third of the instructions it
/// took to write a receipt's object). Keep one in a `static let` and pass it where a `String` key would go.
public struct JSONKey: Hashable, Sendable {
    /// The key itself.
    public let name: String
    /// `,"name":` with the name escaped: the separator from the member before, the key, and the colon.
    let separatedText: [UInt8]

    public init(_ name: String) {
        var text = [UInt8(ascii: ",")]
        JSONStringWriter.write(name, to: &text)
        text.append(UInt8(ascii: ":"))
        self.name = name
        separatedText = text
    }

    public static func == (lhs: JSONKey, rhs: JSONKey) -> Bool {
        lhs.name == rhs.name
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}
