"""A one-line data app: what `streamlit hello`'s first page does, without the data."""

import streamlit as st

st.title("Pier real tools")
st.write("a data app left running")
