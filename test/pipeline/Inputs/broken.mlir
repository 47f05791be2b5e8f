// Not an IR mncc can load: an op of a dialect it does not know.
module {
  %0 = "foo.bar"() : () -> i32
}
