export default function Index() {
  return (
    <main>
      <h1>Links</h1>
      <p>Short links, linktrees and click analytics.</p>
    </main>
  );
}
