/// What a connection has learned about its delegate's type: which of its methods are the
/// protocol's default implementations.
///
/// A type's methods are fixed, so what one call shows holds for every later call on a delegate of
/// the same type. A delegate of another type starts from nothing known.
struct DelegateProfile: Sendable {
    private var type: ObjectIdentifier?
    private var defaults: DelegateMethods = []

    /// Whether every one of `methods` is known to be the protocol's default for `delegate`'s type.
    func leavesToDefault(_ methods: DelegateMethods, _ delegate: any HTTPConnectionDelegate) -> Bool {
        type == ObjectIdentifier(Swift.type(of: delegate)) && defaults.isSuperset(of: methods)
    }

    /// Records whether a call of `method` on `delegate` ran the protocol's default.
    mutating func learn(_ method: DelegateMethods, isDefault: Bool, of delegate: any HTTPConnectionDelegate) {
        let delegateType = ObjectIdentifier(Swift.type(of: delegate))
        if type != delegateType {
            type = delegateType
            defaults = []
        }
        if isDefault { defaults.insert(method) } else { defaults.remove(method) }
    }
}
