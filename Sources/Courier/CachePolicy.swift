/// How a request uses the HTTP cache.
///
/// Set at three levels, the most specific winning: ``HTTPConnection/defaultCachePolicy`` (global),
/// ``HTTPConnection/cachePolicy`` (per connection) and ``HTTPRequest/cachePolicy`` (per request).
public enum CachePolicy: Sendable, Hashable {
    /// Follow the HTTP caching rules (RFC 9111). The default.
    case useProtocolCachePolicy
    /// Always load from the network; neither read nor revalidate the cache.
    case reloadIgnoringCache
    /// Use a stored response only after the server confirms it (a conditional request).
    case reloadRevalidatingCache
    /// Use a stored response whatever its age; load only when nothing is stored.
    case returnCacheDataElseLoad
    /// Use a stored response whatever its age; never load. Fails with
    /// ``HTTPConnectionError/notCached`` when nothing is stored.
    case returnCacheDataDontLoad
}
