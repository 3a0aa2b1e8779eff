// Shared by the child-target fixtures. A hook that ran before this child's first script
// left `self.__hooked` behind; `probe(who)` reports what it finds on /__report, which the
// fixture server records for the test.
function probe(who) {
  const got = self.__hooked || "not hooked";
  return fetch("/__report?who=" + who + "&got=" + encodeURIComponent(got));
}
