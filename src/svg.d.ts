/**
 * SVG files are bundled as their source text.
 */
declare module '*.svg' {
  const value: string;
  export default value;
}
