document.body.append("hello from parcel");
