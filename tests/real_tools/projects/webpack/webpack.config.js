module.exports = {
  mode: "development",
  entry: "./src/index.js",
  devServer: { host: "localhost", port: {port}, hot: true, open: false },
};
