/// A member's key made once, for objects written often: ``JSONObjectWriter`` copies its bytes as they are, where a
/// `String` key is escaped and quoted again at each member (a third of the instructions it took to write a
/// receipt's object). Keep one in a `static let` and pass it where a `String` key would go.
///
/// A key written in code is kept as its `StaticString` alone: writing it counts no references, so threads that
/// write the same keys at once do not contend for a shared reference count.
public struct JSONKey: Hashable, Sendable {
    /// The key's bytes when it is a literal that needs no escape: written between quotes as they are.
    private let literal: StaticString?
    /// Otherwise the key, and `,"name":` with it escaped: the separator from the member before, the key, the colon.
    private let madeName: String
    private let separatedText: [UInt8]

    /// A key written in code.
    public init(_ name: StaticString) {
        if name.withUTF8Buffer({ JSONStringWriter.nextEscape(in: $0, from: 0) == nil }) {
            self.init(literal: name, madeName: "", separatedText: [])
        } else {
            self.init(string: name.description)
        }
    }

    /// A key made at run time.
    public init(string name: String) {
        var text = [UInt8(ascii: ",")]
        JSONStringWriter.write(name, to: &text)
        text.append(UInt8(ascii: ":"))
        self.init(literal: nil, madeName: name, separatedText: text)
    }

    private init(literal: StaticString?, madeName: String, separatedText: [UInt8]) {
        self.literal = literal
        self.madeName = madeName
        self.separatedText = separatedText
    }

    /// The key itself.
    public var name: String { literal?.description ?? madeName }

    /// Appends `"name":`, after a `,` unless `first`.
    func write(to output: inout [UInt8], first: Bool) {
        guard let literal else {
            output.append(contentsOf: first ? separatedText[1...] : separatedText[...])
            return
        }
        if !first { output.append(UInt8(ascii: ",")) }
        output.append(UInt8(ascii: "\""))
        literal.withUTF8Buffer { output.append(contentsOf: $0) }
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
    }

    public static func == (lhs: JSONKey, rhs: JSONKey) -> Bool {
        lhs.name == rhs.name
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}
