/**
 * An instance of a `Schema.Class` made from fields already known to be valid, without its constructor.
 *
 * `new C(fields, true)` skips validation, but still copies the fields twice and walks the class's
 * fields for constructor defaults; on the dispatcher's path (a claimed destination, its post, two
 * events per publish) that was the largest single source of the bytes it allocated (Schema's class
 * constructor, 9% of them in a heap profile). The result is what the constructor makes: an object
 * with the class's prototype and `fields` as its own properties, assigned as `Data.Class` assigns
 * them. Nothing is filled in: give every field, defaults included, in the class's order (equal
 * values then have the same key order as constructed ones).
 */
export const unchecked = <P extends object, A extends object>(
  Class: { new(props: P, options?: never): A; readonly prototype: A },
  fields: NoInfer<Required<P>>
): A => Object.assign(Object.create(Class.prototype) as A, fields)
