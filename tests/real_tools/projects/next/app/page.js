export default function Page() {
  return <h1>pier real next</h1>;
}
